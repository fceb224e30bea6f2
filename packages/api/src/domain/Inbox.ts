/** Records of the inbox: every push to the account, by project, with read state. */
import { Schema } from "effect"
import { AppSummary } from "./Apps.ts"
import { BodyFormat, Timestamp } from "./Common.ts"

/** One project of the inbox (`projectId` null: the unfiled items) with its counts and latest item. */
export class InboxProject extends Schema.Class<InboxProject>("InboxProject")({
  projectId: Schema.NullOr(Schema.String),
  name: Schema.String,
  unreadCount: Schema.Natural,
  totalCount: Schema.Natural,
  latestTitle: Schema.NullOr(Schema.String),
  latestPreview: Schema.NullOr(Schema.String),
  latestImageUrl: Schema.NullOr(Schema.String),
  latestAt: Schema.NullOr(Timestamp)
}) {}

/** InboxProjects: the inbox by project, and the unread total. */
export class InboxProjects extends Schema.Class<InboxProjects>("InboxProjects")({
  projects: Schema.Array(InboxProject),
  totalUnread: Schema.Natural
}) {}

/** Where an inbox item came from: a webhook-service `event`, an agent `notification`, a prompt (`interaction`) or an on-call `page`. */
export const InboxOrigin = Schema.Literals(["event", "notification", "interaction", "page"])
export type InboxOrigin = typeof InboxOrigin.Type

/** An inbox item id: composite `event:<id>`, `notification:<id>`, `interaction:<id>` or `page:<id>`. */
export const InboxItemId = Schema.String.check(Schema.isPattern(/^(?:event|notification|interaction|page):.+$/u))

/** InboxNotificationSummary: one inbox item as the list shows it. */
export class InboxNotificationSummary extends Schema.Class<InboxNotificationSummary>("InboxNotificationSummary")({
  id: InboxItemId,
  origin: InboxOrigin,
  projectId: Schema.NullOr(Schema.String),
  projectName: Schema.NullOr(Schema.String),
  sourceName: Schema.String,
  sourceImageUrl: Schema.NullOr(Schema.String),
  title: Schema.String,
  preview: Schema.String,
  url: Schema.NullOr(Schema.String),
  bodyFormat: BodyFormat,
  readAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  app: Schema.NullOr(AppSummary)
}) {}

/** InboxNotificationPage: a page of the inbox, newest first, with cursor and read-through token. */
export class InboxNotificationPage extends Schema.Class<InboxNotificationPage>("InboxNotificationPage")({
  items: Schema.Array(InboxNotificationSummary),
  nextCursor: Schema.NullOr(Schema.String),
  /** Passed to read-all: marks everything up to this list response read. */
  readThroughToken: Schema.String
}) {}

/** Push receipt statuses. */
export const PushReceiptStatus = Schema.Literals(["pending", "accepted", "error", "unknown"])
export type PushReceiptStatus = typeof PushReceiptStatus.Type

/** What a push provider said about one device's copy of an inbox item. */
export class PushReceipt extends Schema.Class<PushReceipt>("PushReceipt")({
  id: Schema.String,
  deviceId: Schema.String,
  status: PushReceiptStatus,
  errorCode: Schema.NullOr(Schema.String),
  checkedAt: Schema.NullOr(Timestamp)
}) {}

/** InboxNotificationDetail: one inbox item with its body and, optionally, its push receipts. */
export class InboxNotificationDetail extends InboxNotificationSummary.extend<InboxNotificationDetail>("InboxNotificationDetail")({
  body: Schema.String,
  summary: Schema.NullOr(Schema.String),
  status: Schema.NullOr(Schema.String),
  pushReceipts: Schema.optionalKey(Schema.Array(PushReceipt))
}) {}

/** ReadMark: the answer of marking an inbox item read (`readAt`) or unread (`readAt` null). */
export class ReadMark extends Schema.Class<ReadMark>("ReadMark")({
  ok: Schema.Literal(true),
  readAt: Schema.NullOr(Timestamp),
  idempotent: Schema.optionalKey(Schema.Boolean)
}) {}
