/**
 * The first read of a request body, before its route decodes it (the decoder
 * gets the same cached bytes), and only once the request is authenticated:
 * the bearer middlewares run it after the token checks out
 * (auth/AgentAuthLive.ts, auth/PersonAuthLive.ts), and the edge runs it for a
 * route without one (the inbound webhook) once the URL's token has its shape
 * (Edge.ts). One linear pass over the text (StorableText.ts) refuses, with 400
 * `VALIDATION_FAILED`:
 *
 * - JSON nested deeper than `MAX_JSON_DEPTH`, before anything parses it;
 * - text the database cannot store (U+0000, a lone surrogate).
 *
 * A body that cannot be read is left to the route, which answers 413 or 400.
 */
import { Context, Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { MAX_JSON_DEPTH } from "../config/Limits.ts"
import { scanJson, textHasNul, unstorableMessage } from "./StorableText.ts"

/** 400 `VALIDATION_FAILED` naming the request slot that failed. */
export const validationFailed = (path: string, message: string) =>
  HttpServerResponse.jsonUnsafe(
    { error: "The request failed validation.", code: "VALIDATION_FAILED", issues: [{ path, message }] },
    { status: 400 }
  )

const tooDeepMessage = `JSON must not nest deeper than ${MAX_JSON_DEPTH} levels.`

/** Runs `httpEffect` unless the request's body is refused (see above). */
export const guardBody = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
  if (request.method === "GET" || request.method === "HEAD") return httpEffect
  const declared = request.headers["content-length"]
  if ((declared === undefined || declared === "0") && request.headers["transfer-encoding"] === undefined) return httpEffect
  // Read the type as the route decoder does: case-insensitive, parameters dropped, JSON when none is sent.
  const type = (request.headers["content-type"] ?? "application/json").toLowerCase().split(";")[0]!.trim()
  const json = type.endsWith("json")
  if (!json && !type.startsWith("text/")) return httpEffect
  return Effect.flatMap(Effect.orElseSucceed(request.text, () => ""), (text) => {
    if (!json) return textHasNul(text) ? Effect.succeed(validationFailed("body", unstorableMessage)) : httpEffect
    const found = scanJson(text, MAX_JSON_DEPTH)
    return found === "ok"
      ? httpEffect
      : Effect.succeed(validationFailed("body", found === "tooDeep" ? tooDeepMessage : unstorableMessage))
  })
}

/** `guardBody` for the request in context: what a bearer middleware wraps its handler in once the token checks out. */
export const guardCurrentBody = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.withFiber((fiber) => guardBody(Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest), httpEffect))
