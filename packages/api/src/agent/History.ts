import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { ActivityFeedPage } from "../domain/ActivityFeed.ts"
import { Event } from "../domain/Services.ts"
import { agentOperation } from "../Operation.ts"
import { AgentAuth } from "../Security.ts"

/** An integer query parameter within bounds, e.g. `?limit=20`. */
export const IntParam = (minimum: number, maximum: number) =>
  Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum, maximum }))

export const EventsQuery = Schema.Struct({
  limit: Schema.optionalKey(IntParam(1, 100))
}).annotate({ identifier: "EventsQuery" })
export type EventsQuery = typeof EventsQuery.Type

export const ActivityFeedQuery = Schema.Struct({
  page: Schema.optionalKey(IntParam(1, 1_000_000))
}).annotate({ identifier: "ActivityFeedQuery" })
export type ActivityFeedQuery = typeof ActivityFeedQuery.Type

export class EventList extends Schema.Class<EventList>("EventList")({
  items: Schema.Array(Event)
}) {}

export class HistoryGroup extends HttpApiGroup.make("history")
  .add(
    HttpApiEndpoint.get("events", "/events", { query: EventsQuery, success: EventList }).pipe(agentOperation({
      summary: "Recent webhook-service deliveries",
      description: "The account's recent inbound deliveries (Event), newest first: `limit` 1–100 (default 50). " +
        "`deliveredCount` is how many devices' providers accepted the push; `status` is `queued` while pushes are " +
        "pending, then `delivered` (every device), `partial` (some), `failed` (none; `error` says why) or `no_devices`. " +
        "`format` is what the delivery was read as, `priority` its push's (from the sender's severity), `alertKey` and " +
        "`state` (`firing`/`resolved`) the sender's alert identity when it has one, and `payload` the parsed delivery, " +
        "unknown fields included, within 16 KiB (docs/inbound-webhooks.md); deliveries from before these fields " +
        "existed have them null.",
      scopes: ["events:read"]
    })),
    HttpApiEndpoint.get("activityFeed", "/activity-feed", { query: ActivityFeedQuery, success: ActivityFeedPage }).pipe(
      agentOperation({
        summary: "Merged account history",
        description: "Notifications, live activities and prompt responses merged, newest first, 20 per page; `page` " +
          "is 1-based (default 1). `total` counts every item; a page past the end has no items.",
        scopes: ["events:read"]
      })
    )
  )
  .middleware(AgentAuth)
{}
