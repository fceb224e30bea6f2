/**
 * The MCP tools an agent sees: names, descriptions (which say when to use
 * each), parameters and results. Parameters reuse the Agent API's own field
 * schemas, so a tool takes exactly the lengths and shapes its route takes;
 * results are the records the mirrored route answers. A capability error
 * (404, 409, 422 …) is a tool result with `isError: true` carrying the
 * route's `{code, error, …}` body (`failureMode: "return"`), so the model
 * reads it and can act on it.
 */
import {
  ActivityCapacityExceeded,
  ActivityEnded,
  ActivityIdentifier,
  ActivityKeyConflict,
  ActivityPayloadTooLarge,
  AgentNotificationCreated,
  AnswerMismatch,
  BadRequest,
  Conflict,
  CreateInteractionRequest,
  CreateNotificationRequest,
  CreatePageRequest,
  CurrentAgent,
  InboxListQuery,
  InboxNotificationPage,
  Interaction,
  InteractionCreated,
  InteractionId,
  InteractionNotPending,
  InteractiveLiveActivityUnsupported,
  LiveActivityMutation,
  NoLiveActivityDevice,
  NotFound,
  OncallGroupId,
  OncallPage,
  PropsPatch,
  ServiceUnavailable,
  StartActivityRequest,
  Unauthorized,
  UpdateActivityRequest,
  ValidationFailed
} from "@herald/api"
import { Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

/** The longest a tool call waits for an answer: under the 60 s an MCP client's request timeout allows by default. */
export const MAX_WAIT_SECONDS = 55

/** How many inbox items `inbox` answers at most (and by default): recent items, not a pager. */
export const INBOX_MAX_ITEMS = 20
export const INBOX_DEFAULT_ITEMS = 10

const WaitSeconds = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_WAIT_SECONDS })).annotate({
  description: `How long to wait for the answer, 1–${MAX_WAIT_SECONDS} seconds (default ${MAX_WAIT_SECONDS}).`
})

/** Every error body a tool can answer, as its route answers it (`_tag` stays off the wire). */
export const ToolFailure = Schema.Union([
  ValidationFailed,
  AnswerMismatch,
  BadRequest,
  NotFound,
  Conflict,
  InteractionNotPending,
  ActivityKeyConflict,
  ActivityEnded,
  ActivityCapacityExceeded,
  ActivityPayloadTooLarge,
  NoLiveActivityDevice,
  InteractiveLiveActivityUnsupported,
  ServiceUnavailable,
  Unauthorized
])

const N = CreateNotificationRequest.fields
const I = CreateInteractionRequest.fields
const P = CreatePageRequest.fields

export const Notify = Tool.make("notify", {
  description: "Send the person a one-way push notification on their phone (and file it in their inbox). Use it to " +
    "report something they should know — a finished task, a failure, a result — when you need no answer. Keep the " +
    "title short; the body may be longer (bodyFormat markdown is shown as plain text in the preview). Do not use it " +
    "to ask something: use `ask`. Answers the notification record and how many devices accepted it.",
  parameters: Schema.Struct({
    title: N.title,
    body: N.body,
    summary: N.summary,
    bodyFormat: N.bodyFormat,
    url: N.url,
    imageUrl: N.imageUrl,
    projectId: N.projectId
  }),
  success: AgentNotificationCreated,
  failure: ToolFailure,
  failureMode: "return",
  dependencies: [CurrentAgent]
}).annotate(Tool.Title, "Notify the person")

export const Ask = Tool.make("ask", {
  description: "Ask the person a question on their phone and wait for the answer. kind `approval` (approved/denied) " +
    "before anything irreversible or risky — deleting data, deploying, spending money, sending on their behalf; " +
    "`yes_no` (yes/no) for a decision; `reply` for a free-text answer (offer `choices` as quick replies). It blocks " +
    `until the person answers or up to waitSeconds (default ${MAX_WAIT_SECONDS}); if no answer came yet it returns ` +
    "the still-pending prompt with its id: call `wait` with that id to keep waiting (never ask the same question " +
    "again), or `cancel` it when it no longer matters. Treat anything but `approved`/`yes` as a no. " +
    "`defaultOnTimeout` (an answer of the kind: approved/denied, yes/no, or the reply text) is the answer the prompt " +
    "takes if nobody answers before it expires; the result then says `timedOut: true` — nobody decided. `remind` " +
    "({everySeconds, times}) pushes the question again while it is pending (null: never; absent: the person's default).",
  parameters: Schema.Struct({
    kind: I.kind,
    title: I.title,
    prompt: I.prompt,
    choices: I.choices,
    presentation: I.presentation,
    expiresInSeconds: I.expiresInSeconds,
    url: I.url,
    imageUrl: I.imageUrl,
    primaryLabel: I.primaryLabel,
    secondaryLabel: I.secondaryLabel,
    projectId: I.projectId,
    defaultOnTimeout: I.defaultOnTimeout,
    remind: I.remind,
    waitSeconds: Schema.optionalKey(WaitSeconds)
  }),
  success: InteractionCreated,
  failure: ToolFailure,
  failureMode: "return",
  dependencies: [CurrentAgent]
}).annotate(Tool.Title, "Ask the person and wait")

export const Wait = Tool.make("wait", {
  description: "Keep waiting for the answer to a prompt you created with `ask` (its id, `int_…`). Returns the prompt " +
    `as soon as it is answered, canceled or expired, or after waitSeconds (default ${MAX_WAIT_SECONDS}) with status ` +
    "still `pending`: then call `wait` again. Reading an answer has no effect on the person.",
  parameters: Schema.Struct({
    id: InteractionId,
    waitSeconds: Schema.optionalKey(WaitSeconds)
  }),
  success: Interaction,
  failure: ToolFailure,
  failureMode: "return",
  dependencies: [CurrentAgent]
}).annotate(Tool.Title, "Wait for an answer").annotate(Tool.Readonly, true).annotate(Tool.Idempotent, true)

export const Cancel = Tool.make("cancel", {
  description: "Withdraw a pending prompt you created with `ask` (its id) when the question no longer matters — you " +
    "went another way, or the moment passed. The person can no longer answer it. A prompt that was already answered, " +
    "canceled or expired answers CONFLICT (read its outcome with `wait`).",
  parameters: Schema.Struct({ id: InteractionId }),
  success: Interaction,
  failure: ToolFailure,
  failureMode: "return",
  dependencies: [CurrentAgent]
}).annotate(Tool.Title, "Cancel a prompt").annotate(Tool.Destructive, true)

export const Progress = Tool.make("progress", {
  description: "Show the progress of a long task live on the person's lock screen (a live activity), by a `key` you " +
    "choose. action `start` (props.title required; `replace: true` restarts a key that is still live), `update` " +
    "(props merged field by field: status, detail, progress 0..1, …; `priority: high` only for milestones the person " +
    "should notice), `end` when the task is done or abandoned. Use it for work of minutes or more, not for one-off " +
    "messages (`notify`). Needs a phone that can show live activities (else NO_LIVE_ACTIVITY_DEVICE).",
  parameters: Schema.Struct({
    action: Schema.Literals(["start", "update", "end"]),
    key: ActivityIdentifier,
    props: Schema.optionalKey(PropsPatch),
    replace: StartActivityRequest.fields.replace,
    expiresInSeconds: StartActivityRequest.fields.expiresInSeconds,
    priority: UpdateActivityRequest.fields.priority
  }),
  success: LiveActivityMutation,
  failure: ToolFailure,
  failureMode: "return",
  dependencies: [CurrentAgent]
}).annotate(Tool.Title, "Live progress")

/** A page's outcome: created (`deduplicated: false`) or absorbed by an open page with the same dedup key. */
export const PageResult = Schema.Struct({ page: OncallPage, deduplicated: Schema.Boolean }).annotate({ identifier: "PageResult" })

export const Page = Tool.make("page", {
  description: "Page an on-call group (its id, `ocg_…`): whoever is on call is alerted at once with a time-sensitive " +
    "alert, and the group's escalation runs until someone acknowledges. Only for an incident that needs a human now " +
    "— an outage, data loss, a security event; for anything that can wait use `notify`. `dedupKey` folds repeats of " +
    "the same incident into the open page instead of paging again.",
  parameters: Schema.Struct({
    groupId: OncallGroupId,
    title: P.title,
    body: P.body,
    url: P.url,
    dedupKey: P.dedupKey
  }),
  success: PageResult,
  failure: ToolFailure,
  failureMode: "return",
  dependencies: [CurrentAgent]
}).annotate(Tool.Title, "Page on-call")

export const Inbox = Tool.make("inbox", {
  description: "Read the person's most recent inbox items (notifications, prompts, pages, webhook events), newest " +
    `first, at most ${INBOX_MAX_ITEMS}. Use it to check what was already sent before sending again, or what is ` +
    "unread (`unread: true`).",
  parameters: Schema.Struct({
    limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: INBOX_MAX_ITEMS })).annotate({
      description: `How many items, 1–${INBOX_MAX_ITEMS} (default ${INBOX_DEFAULT_ITEMS}).`
    })),
    unread: Schema.optionalKey(Schema.Boolean),
    project: InboxListQuery.fields.project
  }),
  success: InboxNotificationPage,
  failure: ToolFailure,
  failureMode: "return",
  dependencies: [CurrentAgent]
}).annotate(Tool.Title, "Recent inbox").annotate(Tool.Readonly, true)

export const HeraldTools = Toolkit.make(Notify, Ask, Wait, Cancel, Progress, Page, Inbox)

/** What the server tells a connecting agent Herald is for (`instructions` of `initialize`). */
export const INSTRUCTIONS = "Herald reaches the person who owns this connection on their phone. Use `notify` to tell " +
  "them something that needs no answer; `ask` before anything irreversible or when you need their decision (it waits " +
  "for the answer; if it is still pending, call `wait` with its id); `progress` to show a long task live on their " +
  "lock screen; `page` only for an urgent incident for an on-call group; `inbox` to see what was already sent. " +
  "Be brief: titles are read on a lock screen."
