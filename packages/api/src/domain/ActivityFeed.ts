/** Records of the activity feed: the "merged account history, newest first, 20 per page". */
import { Schema } from "effect"
import { Timestamp } from "./Common.ts"

/** What an activity feed item records. */
export const ActivityFeedKind = Schema.Literals(["notification", "live_activity", "response"])
export type ActivityFeedKind = typeof ActivityFeedKind.Type

/** One item of the activity feed. */
export class ActivityFeedItem extends Schema.Class<ActivityFeedItem>("ActivityFeedItem")({
  id: Schema.String,
  kind: ActivityFeedKind,
  sourceName: Schema.String,
  sourceImageUrl: Schema.NullOr(Schema.String),
  title: Schema.String,
  detail: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.String),
  createdAt: Timestamp
}) {}

/** ActivityFeedPage: one page (1-based) of the feed and the total item count. */
export class ActivityFeedPage extends Schema.Class<ActivityFeedPage>("ActivityFeedPage")({
  items: Schema.Array(ActivityFeedItem),
  page: Schema.Natural,
  pageSize: Schema.Natural,
  total: Schema.Natural
}) {}
