/**
 * Waiters on one process, a change on another: every prompt transition sends
 * `NOTIFY herald_prompts` (delivered when its transaction commits), and each
 * process listens and has its own entity of that prompt re-read it, which
 * wakes the waiters parked there. Changes made on this process wake its
 * waiters directly and are ignored when they come back.
 *
 * PostgreSQL only: the embedded database serves one process over a single
 * connection, which a listener would hold for good.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Queue } from "effect"
import { randomBytes } from "node:crypto"
import { Prompt } from "./PromptEntity.ts"

export const CHANNEL = "herald_prompts"

export class PromptWakeups extends Context.Service<PromptWakeups, {
  /** The NOTIFY payload announcing a change of prompt `id` made here. */
  readonly payload: (id: string) => string
}>()("herald/PromptWakeups") {
  static readonly layer = Layer.effect(PromptWakeups, Effect.sync(() => {
    const origin = randomBytes(6).toString("hex")
    return PromptWakeups.of({ payload: (id) => `${origin}:${id}` })
  }))

  /** Listens for other processes' changes and hands them to this process's entities. */
  static readonly listener = Layer.effectDiscard(Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    if (pg.config.path !== undefined) return
    const own = (yield* PromptWakeups).payload("")
    const prompt = yield* Prompt.client
    const listen = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* pg.listen(CHANNEL)
      while (true) {
        const { payload } = yield* Queue.take(notifications)
        const colon = payload.indexOf(":")
        if (colon < 0 || payload.slice(0, colon + 1) === own) continue
        yield* prompt(payload.slice(colon + 1)).Refresh(undefined, { discard: true }).pipe(Effect.ignore)
      }
    }))
    yield* Effect.forkScoped(
      listen.pipe(
        Effect.catchCause((cause) => Effect.logWarning("prompt wake-up listener lost its connection; reconnecting", cause)),
        Effect.andThen(Effect.sleep(Duration.seconds(1))),
        Effect.forever
      )
    )
  }))
}
