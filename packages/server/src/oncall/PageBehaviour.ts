/**
 * The behaviour of a page's actor (its protocol is `PageProtocol.ts`): every
 * change of one page — a step's timer, acknowledge, escalate, resolve — runs
 * one at a time here; the database's conditional updates make the first
 * change win even across processes. Each message may arrive twice (the cluster
 * delivers at least once) and a second delivery changes nothing: a step's
 * timer runs only its own step from the one before it (PageSteps.ts),
 * acknowledge and resolve answer a page already in that state unchanged.
 * (Escalate is a person's request for one more step: two requests, two steps.)
 * Only the runtime's layer graph imports this module.
 */
import { Duration, Effect, Semaphore } from "effect"
import { Entity } from "effect/cluster"
import { Page } from "./PageProtocol.ts"
import { PageSteps } from "./PageSteps.ts"

/** `step-3` → 3 (a deadline without a step key runs nothing). */
const stepOf = (key: string | undefined) => {
  const match = key === undefined ? null : /^step-(\d+)$/.exec(key)
  return match === null ? undefined : Number(match[1])
}

export const PageLive = Page.toLayer(
  Effect.gen(function*() {
    const { entityId: id } = yield* Entity.CurrentAddress
    const steps = yield* PageSteps
    const lock = yield* Semaphore.make(1)
    const serial = lock.withPermit

    return Page.of({
      Step: ({ payload }) => {
        const step = stepOf(payload.key)
        return step === undefined ? Effect.void : serial(steps.due(id, step))
      },
      Acknowledge: ({ payload }) => serial(steps.acknowledge(id, payload.actor)),
      Escalate: ({ payload }) => serial(steps.escalate(id, payload.actor)),
      Resolve: ({ payload }) => serial(steps.resolve(id, payload.actor))
    })
  }),
  { concurrency: "unbounded", maxIdleTime: Duration.minutes(2) }
)
