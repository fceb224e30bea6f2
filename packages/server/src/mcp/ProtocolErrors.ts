/**
 * The MCP runtime hands every JSON-RPC error it answers (a refused scope, an
 * unknown tool, arguments that fail the tool's schema) to the error
 * reporters, which log what they get at Error (observability/ErrorLogging.ts).
 * Such an error is an answer to the client, like a 4xx is on the APIs, so the
 * MCP routes run with reporters that skip it; an internal error (-32603) and
 * every defect are still reported.
 */
import { Cause, Effect, ErrorReporter } from "effect"
import type { HttpServerResponse } from "effect/http"

const INTERNAL_ERROR_CODE = -32603

const isAnswered = (error: unknown): boolean =>
  typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "number" &&
  (error as { code: number }).code !== INTERNAL_ERROR_CODE

/** A cause made only of JSON-RPC errors answered to the client. */
const onlyAnswered = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.length > 0 && cause.reasons.every((r) => Cause.isFailReason(r) && isAnswered(r.error))

const quiet = (reporter: ErrorReporter.ErrorReporter): ErrorReporter.ErrorReporter => ({
  [ErrorReporter.TypeId]: ErrorReporter.TypeId,
  report: (options) => {
    if (!onlyAnswered(options.cause)) reporter.report(options)
  }
})

// The installed reporters are one set for the life of the server: wrap it once.
const quieted = new WeakMap<ReadonlySet<ErrorReporter.ErrorReporter>, ReadonlySet<ErrorReporter.ErrorReporter>>()

/** Runs an MCP request with reporters that skip the JSON-RPC errors it answers. */
export const withAnsweredErrorsQuiet = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.withFiber((fiber) => {
    const current = fiber.getRef(ErrorReporter.CurrentErrorReporters)
    let wrapped = quieted.get(current)
    if (wrapped === undefined) {
      wrapped = new Set([...current].map(quiet))
      quieted.set(current, wrapped)
    }
    return Effect.provideService(httpEffect, ErrorReporter.CurrentErrorReporters, wrapped)
  })
