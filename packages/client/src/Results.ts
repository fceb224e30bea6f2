/**
 * Telling the answers of `POST /notifications` apart. With `oncall` the push
 * pages a group instead, so the operation answers a notification or a page
 * (created, deduplicated or replayed). The guards read the record's shape,
 * not its class, so they hold for records decoded by any copy of the contract.
 */
import type { AgentNotificationCreated, PageCreated, PageDeduplicated, PageReplay } from "@herald/api"

/** An answer that paged an on-call group. */
export type PageAnswer = PageCreated | PageDeduplicated | PageReplay

/** Any answer of `notifications.create`. */
export type NotificationAnswer = AgentNotificationCreated | PageAnswer

/** The answer paged an on-call group (the request named `oncall`). */
export const isPage = <A extends NotificationAnswer>(answer: A): answer is Extract<A, PageAnswer> => "page" in answer

/** The answer is a push to the account's devices (the request named no `oncall`). */
export const isNotification = <A extends NotificationAnswer>(answer: A): answer is Extract<A, AgentNotificationCreated> =>
  "notification" in answer

/** A record that is not the kind the caller asked for: a page where a notification was expected, or the reverse. */
export class UnexpectedAnswer extends Error {
  readonly answer: unknown
  constructor(expected: string, answer: unknown) {
    super(`expected ${expected}, got ${JSON.stringify(answer)}`)
    this.name = "UnexpectedAnswer"
    this.answer = answer
  }
}

/** The notification of an answer, or a thrown `UnexpectedAnswer` when it paged a group instead. */
export const notificationOf = (answer: NotificationAnswer): AgentNotificationCreated => {
  if (isNotification(answer)) return answer
  throw new UnexpectedAnswer("a notification", answer)
}

/** The page of an answer, or a thrown `UnexpectedAnswer` when it was a plain notification. */
export const pageOf = (answer: NotificationAnswer): PageAnswer => {
  if (isPage(answer)) return answer
  throw new UnexpectedAnswer("a page", answer)
}
