import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ImageUrl, TapUrl } from "../domain/Common.ts"
import { InboxInteraction, Interaction, InteractionCreated, InteractionKind, InteractionReplay, Presentation } from "../domain/Interactions.ts"
import {
  ActivityCapacityExceeded,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  InteractionNotPending,
  InteractiveLiveActivityUnsupported,
  NotFound
} from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { InteractionId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"
import { IntParam } from "./History.ts"
import { IdempotencyHeaders, ProjectId } from "./Notifications.ts"

const Label = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(40))

/** Body of POST /interactions. */
export const CreateInteractionRequest = Schema.Struct({
  kind: InteractionKind,
  title: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  prompt: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4000)),
  presentation: Schema.optionalKey(Presentation),
  /** Suggested answers a person can pick (a `reply` prompt's quick replies). */
  choices: Schema.optionalKey(
    Schema.Array(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))).check(Schema.isMaxLength(10))
  ),
  expiresInSeconds: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 60, maximum: 604_800 }))),
  webhookId: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isPattern(/^whk_[0-9A-Za-z]{1,64}$/)))),
  imageUrl: Schema.optionalKey(Schema.NullOr(ImageUrl)),
  url: Schema.optionalKey(Schema.NullOr(TapUrl)),
  primaryLabel: Schema.optionalKey(Schema.NullOr(Label)),
  secondaryLabel: Schema.optionalKey(Schema.NullOr(Label)),
  projectId: Schema.optionalKey(Schema.NullOr(ProjectId)),
  /** A web app the account can see (`app_…`); the prompt's inbox copy names it as `app`. */
  appId: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isPattern(/^app_[0-9A-Za-z]{1,64}$/))))
}).annotate({ identifier: "CreateInteractionRequest" })
export type CreateInteractionRequest = typeof CreateInteractionRequest.Type

export const WaitQuery = Schema.Struct({
  timeout: Schema.optionalKey(IntParam(1, 60))
}).annotate({ identifier: "WaitQuery" })
export type WaitQuery = typeof WaitQuery.Type

export class InboxInteractionList extends Schema.Class<InboxInteractionList>("InboxInteractionList")({
  items: Schema.Array(InboxInteraction)
}) {}

export class InteractionsGroup extends HttpApiGroup.make("interactions")
  .add(
    HttpApiEndpoint.get("list", "/interactions", { success: InboxInteractionList }).pipe(agentOperation({
      summary: "The account's pending prompts",
      description: "Every pending prompt of the account, from every source (any token, any service), newest first " +
        "(at most 200), as InboxInteraction: `sourceName` is the creating token's name. No agent route answers a prompt.",
      scopes: ["interactions:read"]
    })),
    HttpApiEndpoint.post("create", "/interactions", {
      headers: IdempotencyHeaders,
      payload: CreateInteractionRequest,
      success: [InteractionReplay, InteractionCreated.pipe(HttpApiSchema.status(201))],
      error: [NotFound, IdempotencyKeyReused, IdempotencyKeyInUse, InteractiveLiveActivityUnsupported, ActivityCapacityExceeded]
    }).pipe(agentOperation({
      summary: "Ask a person a question",
      description: "Creates a prompt of `kind` `approval` (answers `approved`/`denied`), `yes_no` (`yes`/`no`) or " +
        "`reply` (`replied` with a free-text `response`), pending until a person answers on a device, the token " +
        "cancels it, or `expiresInSeconds` (60–604800, default 3600) pass (`expired`). `actionDigest` is the " +
        "lowercase hex SHA-256 of the canonical JSON (keys sorted, no whitespace) of `{kind, title, prompt, choices}` " +
        "so the device can show exactly what is approved.\n\n" +
        "`presentation: notification` (default) pushes to the account's active devices through the durable queue: " +
        "`accepted` counts providers that accepted during the request, `queued` the device pushes still queued. " +
        "`presentation: live_activity` answers at once with `accepted: 0`, a `liveActivityId` and `queued` interactive " +
        "cards, one per device with `interactiveLiveActivitiesCapable` (none: 422 " +
        "`INTERACTIVE_LIVE_ACTIVITY_UNSUPPORTED`); each card counts toward the device's five concurrent live " +
        "activities (all full: 422 `ACTIVITY_CAPACITY_EXCEEDED`). A prompt longer than a push can carry shows on the " +
        "card and its alert cut with \"…\" (the prompt itself, and its `actionDigest`, stay whole).\n\n" +
        "When the prompt ends, one signed event goes to each subscribed, enabled reply webhook among `webhookId`, " +
        "the account default — deduplicated by endpoint. An unknown `webhookId` answers 404. " +
        "`appId` names a web app the account can see (its own or one shared with its team or family; unknown or " +
        "another account's: 404); the Interaction record has no app field, so it shows as the `app` (AppSummary) of " +
        "the prompt's inbox item (`interaction:int_…`), null once the app is deleted. " +
        "`Idempotency-Key` as for POST /notifications.",
      scopes: ["interactions:create"],
      sends: true
    })),
    HttpApiEndpoint.get("get", "/interactions/:id", {
      params: { id: InteractionId },
      success: Interaction,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Read a prompt",
      description: "A prompt created by this token; any other prompt answers 404.",
      scopes: ["interactions:read"]
    })),
    HttpApiEndpoint.get("wait", "/interactions/:id/wait", {
      params: { id: InteractionId },
      query: WaitQuery,
      success: Interaction,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Wait for the answer",
      description: "Long-polls a prompt created by this token (others: 404). Answers 200 with the Interaction as " +
        "soon as it leaves `pending` (answered, canceled or expired), or after `timeout` seconds (1–60, default 30) " +
        "with the still-pending Interaction: call it again to keep waiting. Closing the connection early costs the " +
        "server nothing; a waiting request holds no database connection.",
      scopes: ["interactions:read"]
    })),
    HttpApiEndpoint.post("cancel", "/interactions/:id/cancel", {
      params: { id: InteractionId },
      success: Interaction,
      error: [NotFound, InteractionNotPending]
    }).pipe(agentOperation({
      summary: "Cancel a pending prompt",
      description: "Cancels a pending prompt created by this token (others: 404): status `canceled`, `canceledAt` " +
        "set, waiters woken, `interaction.canceled` sent to subscribed reply webhooks. A prompt that already " +
        "left `pending` answers 409 `CONFLICT`.",
      scopes: ["interactions:create"]
    }))
  )
  .middleware(AgentAuth)
{}
