/**
 * Agent API handlers of package review (the rules are Review.ts). The export
 * is the typed JSON record, sent as an attachment; an offer within its
 * package's minute answers 429 with `Retry-After`.
 */
import { AgentApi, CurrentAgent, MiniAppReviewList, RateLimited } from "@herald/api"
import { Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { seconds } from "../billing/RateLimitHeaders.ts"
import { Review } from "./Review.ts"

/** Sets `headers` on the current request's answer. */
const answerHeaders = (headers: Record<string, string>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, headers)))
    return Effect.void
  })

const userId = Effect.map(CurrentAgent, (agent) => agent.userId)

export const MiniAppReviewHandlers = HttpApiBuilder.group(AgentApi, "miniAppReview", Effect.fn(function*(handlers) {
  const review = yield* Review
  return handlers
    .handle("review", () => Effect.flatMap(userId, review.review).pipe(Effect.map((items) => new MiniAppReviewList({ items }))))
    .handle("export", () =>
      Effect.flatMap(userId, review.exportAll).pipe(
        Effect.tap(answerHeaders({
          "content-disposition": "attachment; filename=\"mini-apps-export.json\"",
          "cache-control": "no-store"
        }))
      ))
    .handle("offer", ({ params }) =>
      Effect.flatMap(userId, (id) => review.offer(id, params.packageId)).pipe(
        Effect.catchTag("OfferThrottled", ({ retryAfterMs }) =>
          Effect.andThen(
            answerHeaders({ "retry-after": seconds(retryAfterMs) }),
            Effect.fail(new RateLimited({
              error: `This package was offered less than a minute ago; retry after ${seconds(retryAfterMs)} s.`
            }))
          ))
      ))
    .handle("report", ({ params, payload }) => Effect.flatMap(userId, (id) => review.report(id, params.packageId, payload)))
    .handle("block", ({ params }) => Effect.flatMap(userId, (id) => review.transition(id, params.packageId, "block")))
    .handle("disable", ({ params }) => Effect.flatMap(userId, (id) => review.transition(id, params.packageId, "disable")))
    .handle("remove", ({ params }) => Effect.flatMap(userId, (id) => review.transition(id, params.packageId, "remove")))
}))
