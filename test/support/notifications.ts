/** Narrowing the answer of `POST /notifications` for tests that send plain notifications. */
import { notificationOf } from "@herald/client"
import type { NotificationAnswer } from "@herald/client"
import type { AgentNotificationCreated } from "@herald/api"
import { Effect } from "effect"

/**
 * The answer of `POST /notifications` sent without `oncall`: a notification. (The operation's success is a
 * union with the page answers of `oncall`; a test that sent none narrows here and fails loudly otherwise.)
 */
export const sentNotification = <E, R>(sent: Effect.Effect<NotificationAnswer, E, R>): Effect.Effect<AgentNotificationCreated, E, R> =>
  Effect.map(sent, notificationOf)
