/**
 * A freshly started server's `/metrics` lists every declared metric at 0,
 * before its first event (a dashboard sees 0, not "no data").
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("metrics at zero", (it) => {
  it.effect("the first scrape lists the event metrics at 0", () =>
    Effect.gen(function*() {
      const text = (yield* rawFetch("/metrics")).body as string
      const line = (series: string) => text.split("\n").find((l) => l.startsWith(`${series} `) || l.startsWith(`${series}{`))
      for (const counter of ["herald_live_activity_superseded_total", "herald_push_sends_total"]) {
        assert.isDefined(line(counter), `${counter} missing from:\n${text}`)
        assert.strictEqual(Number(line(counter)!.split(" ").pop()), 0, counter)
      }
      assert.strictEqual(Number(line("herald_push_send_duration_seconds_count")?.split(" ").pop()), 0)
      assert.include(text, "# HELP herald_live_activity_superseded_total")
    }))
})
