/**
 * Process health as metrics: event-loop delay (p99 and max over the last
 * interval, from `perf_hooks`), heap and resident memory. Sampled every five
 * seconds; `/metrics` shows the latest sample.
 */
import { Duration, Effect, Layer, Metric } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"

const INTERVAL = Duration.seconds(5)

const loopP99 = Metric.gauge("herald_event_loop_delay_p99_seconds", {
  description: "99th percentile of event-loop delay over the last 5 s."
})
const loopMax = Metric.gauge("herald_event_loop_delay_max_seconds", { description: "Largest event-loop delay over the last 5 s." })
const heapUsed = Metric.gauge("herald_process_heap_used_bytes", { description: "V8 heap in use." })
const rss = Metric.gauge("herald_process_resident_memory_bytes", { description: "Resident set size." })

export const ProcessMetricsLayer = Layer.effectDiscard(Effect.gen(function*() {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  yield* Effect.addFinalizer(() => Effect.sync(() => histogram.disable()))
  const sample = Effect.gen(function*() {
    // Nanoseconds → seconds.
    yield* Metric.update(loopP99, histogram.percentile(99) / 1e9)
    yield* Metric.update(loopMax, histogram.max / 1e9)
    histogram.reset()
    const memory = process.memoryUsage()
    yield* Metric.update(heapUsed, memory.heapUsed)
    yield* Metric.update(rss, memory.rss)
  })
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(INTERVAL), sample)))
}))
