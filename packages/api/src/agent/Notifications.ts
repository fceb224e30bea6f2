import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { AlertPriority, BodyFormat, ImageUrl, TapUrl } from "../domain/Common.ts"
import { AgentNotificationCreated, AgentNotificationReplay, AgentNotificationWithdrawn } from "../domain/Notifications.ts"
import { PageCreated, PageDeduplicated, PageReplay } from "../domain/Oncall.ts"
import { IdempotencyKeyInUse, IdempotencyKeyReused, MissingScope, NotFound, WithdrawFailed } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { NotificationRef } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

/** A project an item is filed under: a caller-chosen name (the inbox groups by it). */
export const ProjectId = Schema.String.check(
  Schema.isPattern(/^[0-9A-Za-z][0-9A-Za-z._:-]{0,99}$/),
  Schema.makeFilter((s: string) => s !== "unfiled", { expected: "a project id other than the reserved word `unfiled`" })
).annotate({
  identifier: "ProjectId",
  description: "A caller-chosen project id (1–100 of `A-Z a-z 0-9 . _ : -`, not starting with a symbol); the inbox " +
    "groups items by it. The word `unfiled` is reserved for items without a project."
})

/** Body of POST /notifications. */
export const CreateNotificationRequest = Schema.Struct({
  title: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  body: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(10_000)),
  summary: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(500)))),
  bodyFormat: Schema.optionalKey(BodyFormat),
  imageUrl: Schema.optionalKey(Schema.NullOr(ImageUrl)),
  url: Schema.optionalKey(Schema.NullOr(TapUrl)),
  projectId: Schema.optionalKey(Schema.NullOr(ProjectId)),
  appId: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^app_[0-9A-Za-z]{1,64}$/))),
  deviceIds: Schema.optionalKey(
    Schema.Array(Schema.String.check(Schema.isPattern(/^dev_[0-9A-Za-z]{1,64}$/))).check(
      Schema.isMinLength(1),
      Schema.isMaxLength(100)
    )
  ),
  /** How much the push may interrupt (default `normal`); `critical` breaks through quiet hours. */
  priority: Schema.optionalKey(AlertPriority),
  /** An on-call group id: pages that group instead (decisions.md). */
  oncall: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^ocg_[0-9A-Za-z]{1,64}$/)))
}).annotate({ identifier: "CreateNotificationRequest" })
export type CreateNotificationRequest = typeof CreateNotificationRequest.Type

/** decisions.md: 1–255 visible ASCII characters. */
export const IdempotencyKey = Schema.String.check(Schema.isPattern(/^[\x21-\x7e]{1,255}$/)).annotate({
  identifier: "IdempotencyKey",
  description: "1–255 visible ASCII characters. Same account + route + key within 24 h replays the first response."
})

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optionalKey(IdempotencyKey)
})

export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.post("create", "/notifications", {
      headers: IdempotencyHeaders,
      payload: CreateNotificationRequest,
      success: [
        AgentNotificationReplay,
        AgentNotificationCreated.pipe(HttpApiSchema.status(201)),
        PageReplay,
        PageDeduplicated,
        PageCreated.pipe(HttpApiSchema.status(201))
      ],
      error: [NotFound, MissingScope, IdempotencyKeyReused, IdempotencyKeyInUse]
    }).pipe(agentOperation({
      summary: "Send a one-shot push",
      description: "Pushes to the account's active devices (or to `deviceIds`, each of which must be the account's: " +
        "otherwise 404) and files the push in the inbox. Every device push is committed to a durable queue before the " +
        "answer; `accepted` counts the devices whose provider accepted during the request, the rest are retried in " +
        "the background (their receipts show in the inbox detail's `pushReceipts`). `bodyFormat: markdown` bodies are " +
        "stored as given and previewed as plain text. `url` is any absolute URI but `javascript:`, `vbscript:`, " +
        "`data:`, `file:`, `blob:` or `about:`; `imageUrl` is http(s). `appId` names a web app the account can see " +
        "(its own or one shared with its team or family; unknown or another account's: 404): the record echoes it and " +
        "the inbox item carries it as `app` (AppSummary), null once the app is deleted. `Idempotency-Key`: the same body within 24 h replays the first " +
        "answer with `idempotent: true` and status 200; another body answers 422 `IDEMPOTENCY_KEY_REUSED`; a retry " +
        "while the first is running answers 409 `IDEMPOTENCY_KEY_IN_USE`.\n\n" +
        "`priority` (`low`, `normal` — the default —, `high`, `critical`) is stored and echoed on the record. During " +
        "the person's quiet hours (Person API `/api/app/me/quiet-hours`) a push below `critical` is delivered " +
        "silently (no sound, passive interruption level) or held and summarised when the quiet ends, as the person " +
        "chose; `critical` breaks through. A held push is not counted in `accepted`; `message` says it was held.\n\n" +
        "`oncall` (an on-call group id): the push pages that group instead, as POST /oncall/{groupId}/pages does " +
        "(title, body, url and appId become the page's; `summary`, `bodyFormat`, `imageUrl`, `projectId` and " +
        "`deviceIds` do not apply). It needs `oncall:write` as well (else 403 `MISSING_SCOPE`) and the token's " +
        "account must be a member of the group's team (else 404). Answers 201 `{page, deduplicated: false}`, or 200 " +
        "`{page, deduplicated: true}` when an open page of the group with the same dedup key (the `Idempotency-Key`) " +
        "absorbed it.",
      scopes: ["notifications:send"],
      sends: true
    })),
    HttpApiEndpoint.post("withdraw", "/notifications/:id/withdraw", {
      params: { id: NotificationRef },
      success: AgentNotificationWithdrawn,
      error: [NotFound, WithdrawFailed]
    }).pipe(agentOperation({
      summary: "Withdraw a push from the device tray",
      description: "Sends a silent removal command (APNs background push / FCM data message naming the push's collapse " +
        "id) to every device that accepted the push (or whose push is being sent at that moment); pushes still " +
        "queued are not sent at all. The inbox copy is marked read. `withdrawn` when every such device " +
        "accepted the command, `withdraw_partial` when some did; 502 `WITHDRAW_FAILED` when none did (or none had " +
        "accepted the push). `accepted` counts the devices that accepted the command. `{id}` is `anot_…` or " +
        "`notification:anot_…`.",
      scopes: ["notifications:send"]
    }))
  )
  .middleware(AgentAuth)
{}
