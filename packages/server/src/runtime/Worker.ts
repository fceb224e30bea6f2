/**
 * The one supervision helper for background work. A worker is a layer: its
 * fiber lives in the layer's scope, so it starts when the layer graph is built
 * and is interrupted when that scope closes. Services expose one pass (or one
 * iteration) of their work as a plain effect; this module decides how often it
 * runs and what happens when it fails: log with the worker's name, back off on
 * a `Schedule`, run again. Nothing here ever gives up except on interruption.
 */
import { Cause, Duration, Effect, Layer, Schedule } from "effect"

/** Restart delay after consecutive failures: 100 ms doubling, capped at 30 s, jittered (×0.8–1.2). */
export const backoff: Schedule.Schedule<Duration.Duration, unknown> = Schedule.exponential("100 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
  Schedule.jittered
)

/**
 * Runs `effect` once, retrying it on `retrySchedule` while it fails or dies.
 * The cause of every failure is logged; an interruption is not a failure to
 * retry: it ends the worker quietly. The schedule starts afresh on each call,
 * so a success resets the backoff.
 */
const supervised = <E, R>(
  name: string,
  effect: Effect.Effect<void, E, R>,
  retrySchedule: Schedule.Schedule<unknown, unknown>
): Effect.Effect<void, Cause.Cause<E>, R> =>
  effect.pipe(
    Effect.sandbox,
    Effect.tapError((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logWarning(`worker ${name} failed; running it again after a backoff`, cause)
    ),
    Effect.retry({ schedule: retrySchedule, while: (cause) => !Cause.hasInterruptsOnly(cause) })
  )

/** Forks `run` into the layer's scope: the worker lives exactly as long as the layer. */
const workerLayer = <E, R>(name: string, run: Effect.Effect<unknown, E, R>): Layer.Layer<never, never, R> =>
  Layer.effectDiscard(
    // No span around the whole run: it would never end (each pass names its own).
    Effect.forkScoped(run.pipe(Effect.ignore, Effect.annotateLogs({ worker: name })))
  )

/**
 * A worker whose `body` is one iteration of an endless loop (wait for work,
 * do it): the body runs again as soon as it returns; when it fails or dies it
 * runs again after `backoff`, longer with each consecutive failure.
 */
export const loop = <E, R>(name: string, body: Effect.Effect<void, E, R>): Layer.Layer<never, never, R> =>
  workerLayer(name, Effect.forever(supervised(name, body, backoff)))

/**
 * A worker that runs `effect` once, at start (e.g. restoring timers a crash
 * left unstored): when it fails or dies it runs again after `backoff`, until
 * it succeeds; then the worker is done.
 */
export const once = <E, R>(name: string, effect: Effect.Effect<void, E, R>): Layer.Layer<never, never, R> =>
  workerLayer(name, supervised(name, effect, backoff))

/**
 * A worker that runs `pass` now and then `every` after each pass ends
 * (`Schedule.spaced`). A failed pass is logged and tried again after `every`
 * or the backoff, whichever is longer; later passes are unaffected.
 */
export const periodic = <E, R>(name: string, every: Duration.Input, pass: Effect.Effect<void, E, R>): Layer.Layer<never, never, R> =>
  workerLayer(
    name,
    supervised(name, pass, Schedule.max([Schedule.spaced(every), backoff])).pipe(
      Effect.repeat(Schedule.spaced(every))
    )
  )
