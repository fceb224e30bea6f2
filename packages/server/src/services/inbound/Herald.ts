/**
 * `herald`: the spec's JSON `{title?, body*, imageUrl?, url?}`, checked exactly
 * as before (400 `VALIDATION_FAILED` with issues). Other fields no longer
 * refuse it (issue 34): they are kept on the Event's payload, and a
 * `priority` among them (a severity word or 1–5) is read.
 */
import { InboundJson } from "@herald/api"
import { Cause, Exit, Schema } from "effect"
import { HttpApiError } from "effect/http-api"
import { issuesOf } from "../../http/RequestErrors.ts"
import type { InboundRequest, Mapped } from "./Inbound.ts"
import { finish, headerPriority, isRecord, priorityOf, Refusal } from "./Inbound.ts"

const decode = Schema.decodeUnknownExit(InboundJson, { errors: "all" })
const spec = new Set(["title", "body", "imageUrl", "url"])

export const mapHerald = (request: InboundRequest, value: unknown): Mapped | Refusal => {
  const exit = decode(value)
  if (Exit.isFailure(exit)) {
    const error = Cause.squash(exit.cause) as Schema.SchemaError
    return new Refusal(400, "The request failed validation.", issuesOf(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause: error })))
  }
  const input = exit.value
  const extra = isRecord(value) && Object.keys(value).some((key) => !spec.has(key))
  return finish("herald", {
    title: input.title ?? null,
    body: input.body,
    url: input.url ?? null,
    imageUrl: input.imageUrl ?? null,
    priority: isRecord(value) ? priorityOf(value.priority) : undefined
  }, extra ? value : null, { strict: true, priority: headerPriority(request) })
}
