/**
 * Group commit for hot single-row statements: calls made by concurrent fibers
 * in the same scheduler turn run as one statement (Effect's request batching),
 * so fifty requests claiming their pushes cost one round trip, not fifty.
 */
import { Effect, Exit, Request, RequestResolver } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"

interface Job<I, O> extends Request.Request<O> {
  readonly input: I
}

/**
 * `runAll` receives every input of one batch and answers one output per
 * input, in order. A failure of `runAll` fails every call of the batch.
 */
export const batched = <I, O>(runAll: (inputs: NonEmptyReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>>) => {
  const job = Request.of<Job<I, O>>()
  const resolver = RequestResolver.make<Job<I, O>>((entries) =>
    Effect.map(runAll(entries.map((entry) => entry.request.input) as unknown as NonEmptyReadonlyArray<I>), (outputs) => {
      entries.forEach((entry, i) => entry.completeUnsafe(Exit.succeed(outputs[i] as O)))
    })
  )
  return (input: I): Effect.Effect<O> => Effect.request(job({ input }), resolver)
}
