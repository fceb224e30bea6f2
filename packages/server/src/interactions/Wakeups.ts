/**
 * Waiters on one process, a change on another: every prompt transition sends
 * `NOTIFY herald_prompts` (delivered when its transaction commits, see
 * `InteractionsRepo.announce`), and each process listens and has its own
 * entity of that prompt re-read it, which wakes the waiters parked there.
 * Changes made on this process wake its waiters directly and are ignored when
 * they come back.
 *
 * The listener is a worker (`runtime/Workers.ts`): `listen` is one
 * connection's life, run again after a backoff when the connection is lost.
 * PostgreSQL only: the embedded database serves one process over a single
 * connection, which a listener would hold for good.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Queue } from "effect"
import { randomBytes } from "node:crypto"
import { Prompt } from "./PromptProtocol.ts"
import { PROMPTS_CHANNEL } from "./InteractionsRepo.ts"

export class PromptWakeups extends Context.Service<PromptWakeups, {
  /** The NOTIFY payload announcing a change of prompt `id` made here. */
  readonly payload: (id: string) => string
  /** Whether there is anything to listen to: false on the embedded database (one process). */
  readonly enabled: boolean
  /**
   * Listens for other processes' changes and hands each to this process's
   * entity of that prompt; ends only when the connection fails.
   */
  readonly listen: Effect.Effect<void, unknown>
}>()("herald/PromptWakeups") {
  static readonly layer = Layer.effect(PromptWakeups, Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const prompt = yield* Prompt.client
    const origin = `${randomBytes(6).toString("hex")}:`

    const dispatch = (payload: string) => {
      const colon = payload.indexOf(":")
      if (colon < 0 || payload.slice(0, colon + 1) === origin) return Effect.void
      // A lost wake-up only delays a waiter until its own timeout or the next change: not worth failing the listener.
      return prompt(payload.slice(colon + 1)).Refresh(undefined, { discard: true }).pipe(Effect.ignore)
    }

    const listen = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* pg.listen(PROMPTS_CHANNEL)
      return yield* Effect.forever(Effect.flatMap(Queue.take(notifications), ({ payload }) => dispatch(payload)))
    }))

    return PromptWakeups.of({ payload: (id) => `${origin}${id}`, enabled: pg.config.path === undefined, listen })
  }))
}
