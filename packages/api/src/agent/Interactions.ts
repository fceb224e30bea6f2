import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { EmailFallbackSeconds } from "../app/EmailChannel.ts"
import { ImageUrl, TapUrl } from "../domain/Common.ts"
import {
  InboxInteraction,
  Interaction,
  InteractionCreated,
  InteractionKind,
  InteractionReplay,
  Presentation,
  REMIND_EVERY_MAX_SECONDS,
  REMIND_EVERY_MIN_SECONDS,
  REMIND_TIMES_MAX,
  ReminderSchedule
} from "../domain/Interactions.ts"
import {
  ActivityCapacityExceeded,
  AnswerMismatch,
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
  appId: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isPattern(/^app_[0-9A-Za-z]{1,64}$/)))),
  /** The answer given at expiry when nobody answered: a status of the kind, or a reply's text (one of `choices` when given). */
  defaultOnTimeout: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4000))),
  /** Push the alert again while pending; absent: the person's default (`GET /me/reminders`); null: no reminders. */
  remind: Schema.optionalKey(Schema.NullOr(ReminderSchedule)),
  /** Breaks through the person's quiet hours (its pushes, reminders included, are sent as priority `critical`). */
  urgent: Schema.optionalKey(Schema.Boolean),
  /** Mail the prompt if still pending after `afterSeconds`; absent: the person's default (`GET /me/email-channel`); null: never. */
  fallback: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    email: Schema.Struct({ afterSeconds: EmailFallbackSeconds })
  }).annotate({ identifier: "PromptFallback" })))
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
      error: [NotFound, AnswerMismatch, IdempotencyKeyReused, IdempotencyKeyInUse, InteractiveLiveActivityUnsupported, ActivityCapacityExceeded]
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
        "`Idempotency-Key` as for POST /notifications.\n\n" +
        "`defaultOnTimeout` (optional): the answer the prompt resolves with when it expires unanswered — " +
        "`approved` or `denied` for `approval`, `yes` or `no` for `yes_no`, the response text (1–4000 characters) " +
        "for `reply`, which must be one of `choices` when the prompt has choices. At expiry the prompt takes that " +
        "status (a reply: `replied` with the text as `response`) with `timedOut: true`, `respondedAt` set and no " +
        "responding device or person, and sends `interaction.answered` (its payload carries `timedOut: true`); " +
        "without it the prompt becomes `expired` as before. `timedOut` is false for every other outcome. A default " +
        "that does not fit the kind (or is not one of the choices) answers 400 `ANSWER_DOES_NOT_FIT_KIND`.\n\n" +
        `\`remind\` (optional): \`{everySeconds, times}\` (${REMIND_EVERY_MIN_SECONDS}–${REMIND_EVERY_MAX_SECONDS} seconds, ` +
        `1–${REMIND_TIMES_MAX} times): while the prompt is pending its alert is pushed again to the account's active ` +
        "devices every `everySeconds` after creation, at most `times` times and never at or after its expiry, with " +
        "the same collapse id, so it replaces the alert on the device rather than adding one. Reminders stop at once " +
        "when the prompt is answered, canceled or expires: queued reminder pushes are dropped and the alert removed " +
        "like the original. Absent: the person's default (`GET /api/app/me/reminders`, none unless they set one); " +
        "`null`: no reminders for this prompt. The record shows the schedule (`remind`) and `remindersSent`. A " +
        "`live_activity` prompt's card stays on screen and is not reminded: `remind` with it answers 400 " +
        "`VALIDATION_FAILED` (the person's default does not apply to it).\n\n" +
        "`urgent` (optional, default false; stored, shown on the record): the prompt breaks through the person's " +
        "quiet hours — its alert and reminders are pushed as priority `critical`, with sound, even while the " +
        "person's quiet hours would make routine pushes silent or hold them. A prompt that is not urgent follows " +
        "the quiet hours like any routine push (docs/quiet-hours.md).\n\n" +
        "`fallback` (optional): `{email: {afterSeconds}}` (60–604800, and less than the prompt's expiry, else 400 " +
        "`VALIDATION_FAILED` at `fallback.email.afterSeconds`): when the prompt is still pending `afterSeconds` after " +
        "creation it is mailed once to the person, with one signed answer link per answer (approve/deny, yes/no, each " +
        "choice of a reply prompt, and one to reply in free text), each opening a confirmation page whose button " +
        "answers as the person (no responding device). Only when the person turned the e-mail channel on and verified " +
        "the address (`/api/app/me/email-channel`); otherwise nothing is mailed. Absent: the person's " +
        "`promptAfterSeconds` (none unless set); `null`: never mailed. Links work once and end with the prompt " +
        "(docs/email.md).",
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
        "soon as it leaves `pending` (answered — by a person, or by its `defaultOnTimeout` at expiry, then " +
        "`timedOut: true` — canceled or expired), or after `timeout` seconds (1–60, default 30) " +
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
