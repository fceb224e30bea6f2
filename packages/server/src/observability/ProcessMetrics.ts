/**
 * Process health as metrics: event-loop delay (p99 and max over the last
 * interval, from `perf_hooks`), garbage-collection pauses, heap and resident
 * memory. Sampled every five seconds; `/metrics` shows the latest sample. GC
 * pauses are counted as they happen: a pause stops the event loop, so they
 * are what an event-loop delay figure is made of when the heap is busy.
 */
import { Context, Duration, Effect, Layer, Metric } from "effect"
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import type { NodeGCPerformanceDetail, PerformanceEntry } from "node:perf_hooks"

const INTERVAL = Duration.seconds(5)

const loopP99 = Metric.gauge("herald_event_loop_delay_p99_seconds", {
  description: "99th percentile of event-loop delay over the last 5 s."
})
const loopMax = Metric.gauge("herald_event_loop_delay_max_seconds", { description: "Largest event-loop delay over the last 5 s." })
const heapUsed = Metric.gauge("herald_process_heap_used_bytes", { description: "V8 heap in use." })
const rss = Metric.gauge("herald_process_resident_memory_bytes", { description: "Resident set size." })
const gcMax = Metric.gauge("herald_gc_pause_max_seconds", { description: "Longest garbage-collection pause over the last 5 s." })

/** Minor: a young-generation scavenge; major: a mark-compact of the whole heap; other: incremental steps and weak callbacks. */
const gcKind = (kind: number | undefined) =>
  kind === constants.NODE_PERFORMANCE_GC_MINOR ? "minor" : kind === constants.NODE_PERFORMANCE_GC_MAJOR ? "major" : "other"

// One series per kind, built once (see the note on `series` in http/Edge.ts).
const gcSeries = Object.fromEntries(["minor", "major", "other"].map((kind) => [kind, {
  pauses: Metric.counter("herald_gc_pauses_total", { description: "Garbage-collection pauses by kind.", attributes: { kind }, incremental: true }),
  seconds: Metric.counter("herald_gc_pause_seconds_total", {
    description: "Time the process spent paused for garbage collection, by kind.",
    attributes: { kind },
    incremental: true
  })
}]))

/**
 * The process's sampler: its event-loop histogram and GC observer live as long
 * as the layer; `sample` publishes one sample (a worker runs it every
 * `every`, see `runtime/Workers.ts`).
 */
export class ProcessMetrics extends Context.Service<ProcessMetrics, {
  readonly sample: Effect.Effect<void>
  readonly every: Duration.Duration
}>()("herald/ProcessMetrics") {
  static readonly layer = Layer.effect(ProcessMetrics, Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const histogram = monitorEventLoopDelay({ resolution: 10 })
    histogram.enable()
    let longestGc = 0
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const series = gcSeries[gcKind((entry as PerformanceEntry & { readonly detail?: NodeGCPerformanceDetail }).detail?.kind)]!
        series.pauses.updateUnsafe(1, context)
        series.seconds.updateUnsafe(entry.duration / 1000, context)
        longestGc = Math.max(longestGc, entry.duration)
      }
    })
    gc.observe({ entryTypes: ["gc"] })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        histogram.disable()
        gc.disconnect()
      })
    )
    const sample = Effect.gen(function*() {
      // Nanoseconds → seconds.
      yield* Metric.update(loopP99, histogram.percentile(99) / 1e9)
      yield* Metric.update(loopMax, histogram.max / 1e9)
      histogram.reset()
      yield* Metric.update(gcMax, longestGc / 1000)
      longestGc = 0
      const memory = process.memoryUsage()
      yield* Metric.update(heapUsed, memory.heapUsed)
      yield* Metric.update(rss, memory.rss)
    })
    return ProcessMetrics.of({ sample, every: INTERVAL })
  }))
}
