import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { LiveActivity, LiveActivityLayout, LiveActivityMutation, LiveActivityReplay } from "../domain/LiveActivities.ts"
import {
  ActivityCapacityExceeded,
  ActivityEnded,
  ActivityKeyConflict,
  ActivityPayloadTooLarge,
  Conflict,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  NoLiveActivityDevice,
  NotFound
} from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { ActivityIdentifier } from "../Params.ts"
import { AgentAuth } from "../Security.ts"
import { IdempotencyHeaders } from "./Notifications.ts"

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))

const MAX_PROP_DEPTH = 8

const nestedWithin = (value: unknown, depth: number): boolean =>
  value === null || typeof value !== "object" ||
  (depth < MAX_PROP_DEPTH && Object.values(value).every((v) => nestedWithin(v, depth + 1)))

/** A prop the app reads as given (steps, further keys): any JSON nested at most 8 levels deep. */
const PropValue = Schema.Unknown.check(Schema.makeFilter((value: unknown) => nestedWithin(value, 0), {
  expected: `a value nested at most ${MAX_PROP_DEPTH} levels deep`
}))

/** The named props, checked; further keys pass through to the app (at most 30 props in all). */
const propFields = {
  subtitle: Text(200),
  status: Text(200),
  detail: Text(1000),
  progress: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })),
  layout: LiveActivityLayout,
  steps: Schema.Array(PropValue).check(Schema.isMaxLength(20)),
  accent: Text(32),
  icon: Text(64)
}

const extraKeys = Schema.makeFilter((props: object) => Object.keys(props).length <= 30, {
  expected: "at most 30 props"
})

/** `props` of a start: `title` required. */
export const StartProps = Schema.StructWithRest(
  Schema.Struct({
    title: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
    subtitle: Schema.optionalKey(propFields.subtitle),
    status: Schema.optionalKey(propFields.status),
    detail: Schema.optionalKey(propFields.detail),
    progress: Schema.optionalKey(propFields.progress),
    layout: Schema.optionalKey(propFields.layout),
    steps: Schema.optionalKey(propFields.steps),
    accent: Schema.optionalKey(propFields.accent),
    icon: Schema.optionalKey(propFields.icon)
  }),
  [Schema.Record(Schema.String, PropValue)]
).check(extraKeys).annotate({ identifier: "StartProps" })

/** `props` of an update: merged field by field; `null` removes a field (never `title`). */
export const PropsPatch = Schema.StructWithRest(
  Schema.Struct({
    title: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
    subtitle: Schema.optionalKey(Schema.NullOr(propFields.subtitle)),
    status: Schema.optionalKey(Schema.NullOr(propFields.status)),
    detail: Schema.optionalKey(Schema.NullOr(propFields.detail)),
    progress: Schema.optionalKey(Schema.NullOr(propFields.progress)),
    layout: Schema.optionalKey(Schema.NullOr(propFields.layout)),
    steps: Schema.optionalKey(Schema.NullOr(propFields.steps)),
    accent: Schema.optionalKey(Schema.NullOr(propFields.accent)),
    icon: Schema.optionalKey(Schema.NullOr(propFields.icon))
  }),
  [Schema.Record(Schema.String, PropValue)]
).check(extraKeys).annotate({ identifier: "PropsPatch" })

const ActivityKey = Schema.String.check(
  Schema.isPattern(/^[0-9A-Za-z][0-9A-Za-z._:-]{0,99}$/),
  Schema.makeFilter((key: string) => !key.startsWith("act_"), { expected: "a key not starting with act_" })
)

/** Body of POST /activities. */
export const StartActivityRequest = Schema.Struct({
  key: Schema.optionalKey(Schema.NullOr(ActivityKey)),
  props: StartProps,
  replace: Schema.optionalKey(Schema.Boolean),
  expiresInSeconds: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 60, maximum: 43_200 }))),
  deviceIds: Schema.optionalKey(
    Schema.Array(Schema.String.check(Schema.isPattern(/^dev_[0-9A-Za-z]{1,64}$/))).check(Schema.isMinLength(1), Schema.isMaxLength(20))
  )
}).annotate({ identifier: "StartActivityRequest" })
export type StartActivityRequest = typeof StartActivityRequest.Type

/** Body of PATCH /activities/{identifier}. */
export const UpdateActivityRequest = Schema.Struct({
  props: Schema.optionalKey(PropsPatch),
  priority: Schema.optionalKey(Schema.Literals(["high", "default"]))
}).annotate({ identifier: "UpdateActivityRequest" })
export type UpdateActivityRequest = typeof UpdateActivityRequest.Type

export class LiveActivityList extends Schema.Class<LiveActivityList>("LiveActivityList")({
  items: Schema.Array(LiveActivity)
}) {}

const identifier = { identifier: ActivityIdentifier }

export const ACTIVITY_TRANSITIONS = "Status: `starting` until a device's provider accepts the start; then `active` " +
  "(every device that answered accepted) or `partial` (some devices failed for good: refused by the provider, out of " +
  "attempts, or full; or, after it showed the card, whose update token the provider refused for good): a failed device's " +
  "place is freed and nothing more is sent to it; `failed` when every device failed; `ended` by POST …/end (at once, " +
  "for the logical activity; a device that shows the card gets what it has queued, then its end, queued durably and sent " +
  "in order, iOS ones once the update token exists; a device whose start has not gone gets nothing more); `expired` at " +
  "`expiresAt` (queued operations are dropped). `ended`, `expired` and `failed` are final: POST …/end or PATCH on one " +
  "answers 409 `ACTIVITY_ENDED`."

export class ActivitiesGroup extends HttpApiGroup.make("activities")
  .add(
    HttpApiEndpoint.get("list", "/activities", { success: LiveActivityList }).pipe(agentOperation({
      summary: "Live activities started by this token",
      description: "The live activities this token started, newest first (at most 100).",
      scopes: ["activities:read"]
    })),
    HttpApiEndpoint.post("start", "/activities", {
      headers: IdempotencyHeaders,
      payload: StartActivityRequest,
      success: [LiveActivityReplay, LiveActivityMutation.pipe(HttpApiSchema.status(201))],
      error: [
        NotFound,
        ActivityKeyConflict,
        ActivityCapacityExceeded,
        NoLiveActivityDevice,
        ActivityPayloadTooLarge,
        IdempotencyKeyReused,
        IdempotencyKeyInUse
      ]
    }).pipe(agentOperation({
      summary: "Start a live activity",
      description: "Starts a progress card on the account's live-activity-capable devices (or `deviceIds`, each the " +
        "account's, else 404; inactive or incapable ones are left out; none left: 422 `NO_LIVE_ACTIVITY_DEVICE`): iOS through the device's push-to-start token, Android as an FCM data message. Starts " +
        "are paced per device; `queued` counts the device starts not yet sent. `key` names the activity for later " +
        "calls; starting a key this token still has live answers 409 `ACTIVITY_KEY_CONFLICT` unless `replace: true`, " +
        "which ends that activity in the same step as the new start (`replaced: 1`; its places count as free): a start " +
        "that fails leaves it as it was, and concurrent replacing starts of one key take turns. A device shows at most " +
        "five live activities (interactive prompt cards included): full devices count in `failed`; when every device " +
        "is full, 422 " +
        "`ACTIVITY_CAPACITY_EXCEEDED` (`limit: 5`). `props.title` is required; `progress` is 0..1; `layout` one of " +
        "standard, ring, hero, terminal, steps; other props (at most 30 in all) are any JSON nested at most 8 levels. " +
        "A payload over the providers' 4 KB (APNs' or FCM's; the start's, or the end's the props would make) " +
        "answers 400 `ACTIVITY_PAYLOAD_TOO_LARGE`. " +
        "Text over a layout's suggested visible-character budget is kept whole and reported in `budgetWarnings`. " +
        "`expiresInSeconds` 60–43200 (default 28800).\n\n" + ACTIVITY_TRANSITIONS,
      scopes: ["activities:write"],
      sends: true
    })),
    HttpApiEndpoint.get("get", "/activities/:identifier", { params: identifier, success: LiveActivity, error: NotFound }).pipe(
      agentOperation({
        summary: "Read a live activity",
        description: "A live activity this token started, by `act_…` id or key (the live one, else the newest).",
        scopes: ["activities:read"]
      })
    ),
    HttpApiEndpoint.patch("update", "/activities/:identifier", {
      params: identifier,
      payload: UpdateActivityRequest,
      success: LiveActivityMutation,
      error: [NotFound, ActivityEnded, ActivityPayloadTooLarge, Conflict]
    }).pipe(agentOperation({
      summary: "Update a live activity",
      description: "Merges `props` field by field (`null` removes a field) and sends the new state to every device. " +
        "Routine updates go at APNs priority 5 (`routine`), at most one per device per second: an unsent routine " +
        "snapshot is replaced by a newer one (`superseded`). `priority: high` is a milestone at priority 10 while " +
        "the activity's budget allows (4 per rolling minute, 20 per rolling hour), else priority 5 " +
        "(`budget_exhausted`); a granted milestone is never dropped or overtaken. iOS updates wait for the activity's " +
        "update token on that device (`readiness.awaitingUpdateToken`). Props whose update, or the end they would make, " +
        "passes the providers' 4 KB answer 400 `ACTIVITY_PAYLOAD_TOO_LARGE`. A prompt's card (`presentation: live_activity`) " +
        "changes only with its prompt: 409 `CONFLICT`.",
      scopes: ["activities:write"],
      sends: true
    })),
    HttpApiEndpoint.post("end", "/activities/:identifier/end", {
      params: identifier,
      success: LiveActivityMutation,
      error: [NotFound, ActivityEnded, Conflict]
    }).pipe(agentOperation({
      summary: "End a live activity",
      description: "Ends the logical activity at once (`ended`). Each device's end operation is queued durably and " +
        "sent after what is queued before it — on iOS once the activity's update token exists — so the answer may " +
        "carry `accepted: 0, failed: 0, queued: N`. A device whose start has not gone gets nothing more. An activity " +
        "already ended, expired or failed answers 409 `ACTIVITY_ENDED`; a prompt's card, which ends with its prompt, 409 " +
        "`CONFLICT`.",
      scopes: ["activities:write"]
    }))
  )
  .middleware(AgentAuth)
{}
