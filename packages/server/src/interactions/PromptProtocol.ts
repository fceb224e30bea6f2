/**
 * The message protocol of a prompt's actor: an `effect/cluster` entity keyed
 * by the interaction id. Callers (the prompts service, the wake-up listener)
 * import this module only, and call through `cluster/EntityCalls.ts`; the
 * behaviour is `PromptBehaviour.ts`, which only the runtime's layer graph
 * imports.
 *
 * Expiry is durable: `Expire` is the shared persisted `Deadline`, delivered
 * at `expiresAt`, so a restart before the deadline still expires the prompt
 * on time and a restart after it expires the prompt at once.
 *
 * Every message may be delivered twice (the cluster delivers at least once):
 * answer, cancel and expiry move the prompt only from `pending` (one
 * conditional update, with its events in the same transaction), so a second
 * delivery finds it ended and emits nothing; refresh and wait only read.
 *
 * A wait does not hold its actor in place: when the prompt's shard moves to
 * another runner (one joined, or this one is stopping) the wait is cut at
 * once (`ClusterSchema.InterruptOnTermination`), not after the runtime's
 * grace period, and the prompts service issues it again, to the new owner,
 * for what is left of the caller's timeout (Interactions.ts).
 */
import { AnswerMismatch, AnswerStatus, Interaction, InteractionNotPending } from "@herald/api"
import { Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { deadlineRpc } from "../cluster/Deadline.ts"

export const Prompt = Entity.make("Prompt", [
  /** The prompt's deadline: one per prompt (a re-send deduplicates). */
  deadlineRpc("Expire"),
  /** Reminder n of a pending prompt (key `remind:<n>`, one timer stored at a time: Reminders.ts). */
  deadlineRpc("Remind"),
  /** The prompt's e-mail fallback, if it is still pending (key `email-fallback`: email/PromptMail.ts). */
  deadlineRpc("EmailFallback"),
  Rpc.make("Answer", {
    payload: {
      status: AnswerStatus,
      response: Schema.NullOr(Schema.String),
      userId: Schema.String,
      deviceId: Schema.NullOr(Schema.String)
    },
    success: Interaction,
    error: Schema.Union([InteractionNotPending, AnswerMismatch])
  }),
  Rpc.make("Cancel", { success: Interaction, error: InteractionNotPending }),
  /** Another process changed the prompt: re-read it and wake the waiters if it ended. */
  Rpc.make("Refresh"),
  /**
   * Answers `true` once the prompt has left `pending`, `false` when `timeoutMillis` passed first; interrupted
   * when the actor is stopped (its shard moving), so that the caller can ask the new owner.
   */
  Rpc.make("Wait", { payload: { timeoutMillis: Schema.Number }, success: Schema.Boolean }).annotate(
    ClusterSchema.InterruptOnTermination,
    true
  )
])
