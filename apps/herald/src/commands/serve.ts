/**
 * `herald serve`: run the service (migrations are applied at start). Every
 * setting is checked before anything is opened (config/Preflight.ts), and the
 * shutdown is logged at both ends: `herald stopping (SIGTERM)` when it begins,
 * before the workers and the listener close, and `herald stopped` once
 * everything is released.
 */
import { Effect, Layer } from "effect"
import { Command } from "effect/cli"

/** Which signal ended the service, noted before the runtime's own handler interrupts it. */
const watchSignals = Effect.acquireRelease(
  Effect.sync(() => {
    const seen: { signal?: NodeJS.Signals } = {}
    const note = (signal: NodeJS.Signals) => () => {
      seen.signal ??= signal
    }
    const listeners = (["SIGINT", "SIGTERM"] as const).map((signal) => [signal, note(signal)] as const)
    // Prepended: NodeRuntime's handler may run the shutdown synchronously, and its first log line names the signal.
    for (const [signal, listener] of listeners) process.prependListener(signal, listener)
    return { seen, listeners }
  }),
  ({ listeners }) => Effect.sync(() => listeners.forEach(([signal, listener]) => process.removeListener(signal, listener)))
)

const serveCommand = Effect.gen(function*() {
  // The check and its logger load first, the server's modules only once the settings are sound.
  const [{ checkConfig }, { appConfig }, { loggingLayer }] = yield* Effect.promise(() =>
    Promise.all([
      import("@herald/server/config/Preflight"),
      import("@herald/server/config/AppConfig"),
      import("@herald/server/observability/Logging")
    ])
  )
  yield* checkConfig
  const config = yield* appConfig
  const { ServeLayer } = yield* Effect.promise(() => import("@herald/server/runtime/Server"))
  const { seen } = yield* watchSignals
  const log = (message: string) => Effect.logInfo(message).pipe(Effect.provide(loggingLayer(config)))
  // Built before the service and released after it: the last line of a shutdown.
  const Stopped = Layer.effectDiscard(Effect.addFinalizer(() => log("herald stopped")))
  // Built after the service and released before it: the first line of a shutdown.
  const Stopping = Layer.effectDiscard(
    Effect.addFinalizer(() => log(seen.signal === undefined ? "herald stopping" : `herald stopping (${seen.signal})`))
  )
  yield* Layer.launch(Stopping.pipe(Layer.provideMerge(ServeLayer), Layer.provideMerge(Stopped)))
}).pipe(Effect.scoped)

export const serve = Command.make("serve", {}, () => serveCommand).pipe(
  Command.withDescription("Serve the Agent API, the Person API and the docs (PORT, HOST, DATABASE_URL, … from the environment)")
)
