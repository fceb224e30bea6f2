/** Narrowing the answer of `POST /notifications` for tests that send plain notifications. */
import { AgentNotificationCreated } from "@herald/api"
import type { PageCreated, PageDeduplicated, PageReplay } from "@herald/api"
import { Effect } from "effect"

/**
 * The answer of `POST /notifications` sent without `oncall`: a notification. (The operation's success is a
 * union with the page answers of `oncall`; a test that sent none narrows here and fails loudly otherwise.)
 */
export const sentNotification = <E, R>(
  sent: Effect.Effect<AgentNotificationCreated | PageCreated | PageDeduplicated | PageReplay, E, R>
): Effect.Effect<AgentNotificationCreated, E, R> =>
  Effect.flatMap(sent, (result) =>
    result instanceof AgentNotificationCreated
      ? Effect.succeed(result)
      : Effect.die(new Error(`expected a notification, got ${JSON.stringify(result)}`)))
