/**
 * A live activity's entry in the account's activity feed (GET /activity-feed,
 * kind `live_activity`): written with its start, concluded with its end or
 * expiry (`result` says which), each in the same transaction as the change.
 * A prompt's card is not an entry of its own: its prompt has one (kind
 * `response`).
 */
import { Effect } from "effect"
import type { ActivityFeed, FeedEntry } from "../inbox/ActivityFeed.ts"
import type { ClosedRow, NewActivity } from "./Rows.ts"

/** The line a person reads under the title: the same text the start's alert shows. */
const detailOf = (props: Readonly<Record<string, unknown>>) => {
  const line = props.status ?? props.subtitle ?? props.detail
  return typeof line === "string" ? line : null
}

/** The entry of an agent's activity as it starts. */
export const startedEntry = (activity: NewActivity, sourceName: string, createdAt: string): FeedEntry => ({
  userId: activity.userId,
  kind: "live_activity",
  refId: activity.id,
  sourceName,
  title: String(activity.props.title),
  detail: detailOf(activity.props),
  url: null,
  result: null,
  createdAt
})

/** Concludes the entry of an activity that just ended or expired (nothing for a prompt's card). */
export const concludeEntry = (feed: ActivityFeed["Service"], closed: ClosedRow, result: "ended" | "expired") =>
  closed.interactionId !== null ? Effect.void : feed.conclude({
    userId: closed.userId,
    kind: "live_activity",
    refId: closed.id,
    title: String(closed.props.title),
    detail: detailOf(closed.props),
    result
  })
