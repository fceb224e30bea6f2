/**
 * One actor per prompt: an `effect/cluster` entity keyed by the interaction
 * id owns the prompt's lifecycle. Answer, cancel and expiry are serialized
 * through it (the database's conditional update makes the first one win even
 * across nodes); long-poll waiters park on it, holding no database
 * connection, and are woken the moment the prompt leaves `pending`.
 *
 * Expiry is durable: `Expire` is a persisted message delivered at
 * `expiresAt` (`DeliverAt`), so a restart before the deadline still expires
 * the prompt on time and a restart after it expires the prompt at once.
 */
import { AnswerMismatch, AnswerStatus, Interaction, InteractionNotPending } from "@herald/api"
import { DateTime, Deferred, Duration, Effect, Option, PrimaryKey, Schema, Semaphore } from "effect"
import { ClusterSchema, DeliverAt, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { InteractionsRepo } from "./Repo.ts"
import type { Change } from "./Repo.ts"
import { Transitions } from "./Transitions.ts"

/** The persisted expiry timer; one per prompt (its primary key deduplicates a re-send). */
export class ExpireAt extends Schema.Class<ExpireAt>("herald/PromptExpireAt")({
  expiresAtMillis: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return "expire"
  }
  [DeliverAt.symbol]() {
    return DateTime.makeUnsafe(this.expiresAtMillis)
  }
}

const notPending = new InteractionNotPending({ error: "The prompt is no longer pending." })

export const Prompt = Entity.make("Prompt", [
  Rpc.make("Expire", { payload: ExpireAt }).annotate(ClusterSchema.Persisted, true),
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
  /** Answers `true` once the prompt has left `pending`, `false` when `timeoutMillis` passed first. */
  Rpc.make("Wait", { payload: { timeoutMillis: Schema.Number }, success: Schema.Boolean })
])

/** Which answers fit which kind (decisions.md). */
const fits = (kind: Interaction["kind"], status: AnswerStatus, response: string | null) => {
  switch (kind) {
    case "approval":
      return (status === "approved" || status === "denied") && response === null
    case "yes_no":
      return (status === "yes" || status === "no") && response === null
    case "reply":
      return status === "replied" && response !== null
  }
}

export const PromptLive = Prompt.toLayer(
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const id = address.entityId
    const repo = yield* InteractionsRepo
    const transitions = yield* Transitions
    const lock = yield* Semaphore.make(1)
    const settled = yield* Deferred.make<void>()

    // A prompt that already ended (or is unknown) has nothing to wait for.
    const current = yield* repo.find(id)
    if (current === undefined || current.status !== "pending") yield* Deferred.succeed(settled, undefined)

    const change = (c: Change) =>
      lock.withPermit(transitions.apply(id, c)).pipe(
        // Changed by us, or found already ended (another node, an earlier run): either way, done.
        Effect.tap(() => Deferred.succeed(settled, undefined))
      )

    return Prompt.of({
      Expire: () => Effect.asVoid(change({ _tag: "Expire" })),
      Answer: ({ payload }) =>
        Effect.gen(function*() {
          const prompt = yield* repo.find(id)
          if (prompt === undefined || prompt.status !== "pending") return yield* notPending
          if (!fits(prompt.kind, payload.status, payload.response)) {
            return yield* new AnswerMismatch({
              error: prompt.kind === "reply"
                ? "A reply prompt is answered with status `replied` and a `response`."
                : `A ${prompt.kind} prompt is answered with ${prompt.kind === "approval" ? "`approved` or `denied`" : "`yes` or `no`"} and no response.`
            })
          }
          const changed = yield* change({ _tag: "Answer", ...payload })
          return changed ?? (yield* notPending)
        }),
      Refresh: () =>
        Effect.flatMap(repo.find(id), (found) =>
          found === undefined || found.status !== "pending" ? Deferred.succeed(settled, undefined) : Effect.void),
      Cancel: () => Effect.flatMap(change({ _tag: "Cancel" }), (changed) => changed === undefined ? notPending : Effect.succeed(changed)),
      Wait: ({ payload }) =>
        Deferred.await(settled).pipe(
          Effect.timeoutOption(Duration.millis(payload.timeoutMillis)),
          Effect.map(Option.isSome)
        )
    })
  }),
  // Waits run side by side; changes are serialized by the lock.
  { concurrency: "unbounded", maxIdleTime: Duration.minutes(2) }
)
