/**
 * One schema-error transform for both APIs: a request whose path, query,
 * headers or body fails decoding answers 400 `VALIDATION_FAILED` with
 * `issues` (`path` names the request slot first: `body.scopes[0]`). A
 * response that fails encoding is our bug: logged, and a 500 `INTERNAL_ERROR`.
 */
import { InternalError, RequestErrors, ValidationFailed } from "@herald/api"
import { Effect, SchemaIssue } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import type { HttpApiError } from "effect/http-api"

const format = SchemaIssue.makeFormatterStandardSchemaV1()

const slotName = {
  Params: "path",
  Query: "query",
  Headers: "headers",
  Payload: "body",
  Body: "body",
  ResponseHeaders: "response"
} as const

const renderPath = (slot: string, path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined) => {
  let out = slot
  for (const segment of path ?? []) {
    const key = typeof segment === "object" && segment !== null ? segment.key : segment
    out += typeof key === "number" ? `[${key}]` : `.${String(key)}`
  }
  return out
}

/** `{path, message}` entries for a decoding failure, capped so a huge body cannot make a huge answer. */
export const issuesOf = (error: HttpApiError.HttpApiSchemaError) => {
  const slot = slotName[error.kind]
  return format(error.cause.issue).issues.slice(0, 50).map((issue) => ({
    path: renderPath(slot, issue.path as ReadonlyArray<PropertyKey>),
    message: issue.message
  }))
}

export const RequestErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(RequestErrors, (error) => {
  if (error.kind === "ResponseHeaders") {
    return Effect.logError("response failed encoding", error.cause).pipe(
      Effect.andThen(Effect.fail(new InternalError({ error: "Internal error." })))
    )
  }
  return Effect.fail(new ValidationFailed({ error: "The request failed validation.", issues: issuesOf(error) }))
})
