/**
 * Path parameter schemas: an id is its type prefix plus a body of at most 64
 * URL-safe characters. A malformed id answers 400 `VALIDATION_FAILED` before
 * any lookup.
 */
import { Schema } from "effect"

const prefixedId = (prefix: string, identifier: string) =>
  Schema.String.check(Schema.isPattern(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`))).annotate({
    identifier,
    description: `An id starting \`${prefix}_\`.`
  })

export const TokenId = prefixedId("tok", "TokenId")
export const DeviceId = prefixedId("dev", "DeviceId")
export const ServiceId = prefixedId("svc", "ServiceId")

/** A notification in withdraw: `anot_…` or the inbox's composite `notification:anot_…`. */
export const NotificationRef = Schema.String.check(
  Schema.isPattern(/^(?:notification:)?anot_[0-9A-Za-z]{1,64}$/)
).annotate({ identifier: "NotificationRef", description: "`anot_…` or `notification:anot_…`." })

/** An inbox item: `event:evt_…`, `notification:anot_…`, `interaction:int_…` or `page:page_…`. */
export const InboxItemRef = Schema.String.check(
  Schema.isPattern(/^(?:event:evt|notification:anot|interaction:int|page:page)_[0-9A-Za-z]{1,64}$/)
).annotate({ identifier: "InboxItemRef", description: "`event:evt_…`, `notification:anot_…`, `interaction:int_…` or `page:page_…`." })

/**
 * The secret of a webhook URL (`hlw_…`); the URL's only credential. Deliberately loose: a malformed
 * token answers 404 through the same lookup as an unknown one, so the route tells nothing about which
 * strings are well-formed.
 */
export const WebhookToken = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)).annotate({
  identifier: "WebhookToken",
  description: "The `hlw_…` token embedded in a service's webhook URL."
})

export const InteractionId = prefixedId("int", "InteractionId")
export const ReplyWebhookId = prefixedId("whk", "ReplyWebhookId")

/** A live activity of this token: its `act_…` id or its caller-chosen key. */
export const ActivityIdentifier = Schema.String.check(Schema.isPattern(/^[0-9A-Za-z][0-9A-Za-z._:-]{0,99}$/)).annotate({
  identifier: "ActivityIdentifier",
  description: "An `act_…` id, or the key the activity was started with."
})
export const ActivityId = prefixedId("act", "ActivityId")

// Teams and families, and web apps.
export const TeamId = prefixedId("team", "TeamId")
export const InviteId = prefixedId("inv", "InviteId")
export const DeviceGroupId = prefixedId("grp", "DeviceGroupId")
export const AppId = prefixedId("app", "AppId")
export const UserId = prefixedId("usr", "UserId")

// On-call.
export const OncallGroupId = prefixedId("ocg", "OncallGroupId")
export const PageId = prefixedId("page", "PageId")

/** A mini-app package (`pkg_…`). */
export const PackageId = prefixedId("pkg", "PackageId")
