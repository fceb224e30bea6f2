import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { AnswerStatus, InboxInteraction, Interaction } from "../domain/Interactions.ts"
import { AnswerMismatch, InteractionNotPending, NotFound } from "../errors.ts"
import { InboxInteractionList } from "../agent/Interactions.ts"
import { personOperation } from "../Operation.ts"
import { DeviceId, InteractionId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** Body of POST /api/app/interactions/{id}/answer. */
export const AnswerRequest = Schema.Struct({
  status: AnswerStatus,
  /** The free-text reply; required for `replied`, refused otherwise. */
  response: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4000)))),
  /** The device the person answered on, when answering from the phone app. */
  deviceId: Schema.optionalKey(Schema.NullOr(DeviceId))
}).annotate({ identifier: "AnswerRequest" })
export type AnswerRequest = typeof AnswerRequest.Type

export class PersonInteractionsGroup extends HttpApiGroup.make("interactions")
  .add(
    HttpApiEndpoint.get("list", "/interactions", { success: InboxInteractionList }).pipe(personOperation({
      summary: "My pending prompts",
      description: "The pending prompts addressed to the person, newest first (the latest 200)."
    })),
    HttpApiEndpoint.get("get", "/interactions/:id", {
      params: { id: InteractionId },
      success: InboxInteraction,
      error: NotFound
    }).pipe(personOperation({
      summary: "One of my prompts",
      description: "A prompt addressed to the person, in any state (`pending`, answered, `canceled`, `expired`), with " +
        "its detail, its `expiresAt` and who asks (`sourceName`). When it is no longer pending, `respondingDeviceId` " +
        "and `respondedAt` tell whether it was answered elsewhere. Another person's prompt answers 404, as a missing one."
    })),
    HttpApiEndpoint.post("answer", "/interactions/:id/answer", {
      params: { id: InteractionId },
      payload: AnswerRequest,
      success: Interaction,
      error: [NotFound, InteractionNotPending, AnswerMismatch]
    }).pipe(personOperation({
      summary: "Answer a prompt",
      description: "Answers a pending prompt: approval takes `approved`/`denied`, yes_no `yes`/`no`, reply " +
        "`replied` with a `response` (otherwise 400 `ANSWER_DOES_NOT_FIT_KIND`). The first answer wins: once the " +
        "prompt left `pending` (answered, canceled, expired) the answer is 409 `CONFLICT`. Records " +
        "`respondingUserId`, `respondingDeviceId` (the person's own device, else 404) and `respondedAt`, wakes the " +
        "agent's waiters and sends `interaction.answered` to the subscribed reply webhooks."
    }))
  )
  .middleware(PersonAuth)
{}
