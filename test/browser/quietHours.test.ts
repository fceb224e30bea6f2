/**
 * The quiet-hours page in Chromium: a person who never set them gets the
 * browser's time zone and a 22:00–07:00 night to start from; saving a
 * schedule (hold mode, not applied), muting for two hours (a notification is then held)
 * and unmuting (its summary arrives) change what the page and the Person API
 * say. No serious accessibility violation; a screenshot is kept for review.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { pageSettled, seriousViolations } from "./support/axe.ts"
import { agentOf, harnessLayer, inTab, makePerson, personApi, signedInTab, until } from "./support/harness.ts"

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("quiet hours in the browser", (it) => {
  it.effect("schedule saved, a mute holds a push, unmuting summarises it", () =>
    Effect.gen(function*() {
      const person = yield* makePerson("Quiet Person")
      const app = yield* personApi(person.session)
      const phone = yield* app.devices.register({ payload: { platform: "ios", deviceName: "iPhone", pushToken: `quiet-${person.id}` } })
      const agent = yield* agentOf(person, ["notifications:send"])
      const tab = yield* signedInTab(person, { timezoneId: "Europe/Berlin" })

      yield* inTab(tab, async (page) => {
        await page.goto("/quiet-hours")
        await page.getByText("Not quiet: pushes arrive as usual.").waitFor()
        assert.strictEqual(await page.getByLabel("Time zone").inputValue(), "Europe/Berlin")
        assert.strictEqual(await page.getByLabel("From").inputValue(), "22:00")
        assert.strictEqual(await page.getByLabel("to", { exact: true }).inputValue(), "07:00")
        await page.getByLabel("held, then summarised in one push when the quiet ends").check()
        // Kept but not applied, so only the mute below makes it quiet, whatever the time of day in Berlin.
        await page.getByLabel("Use this schedule").uncheck()
        await page.getByRole("button", { name: "Save" }).click()
        await page.getByText("Saved.").waitFor()
      })
      const saved = yield* app.quietHours.get()
      assert.deepStrictEqual(
        [saved.enabled, saved.timeZone, saved.mode, saved.windows.map((w) => [w.days.length, w.start, w.end])],
        [false, "Europe/Berlin", "hold", [[7, "22:00", "07:00"]]]
      )

      yield* inTab(tab, async (page) => {
        await page.getByLabel("Mute for (hours, 1–168)").fill("2")
        await page.getByRole("button", { name: "Mute", exact: true }).click()
        await page.getByText(/Quiet \(muted\), ending/).waitFor()
      })
      const muted = yield* app.quietHours.get()
      assert.strictEqual(muted.current.reason, "mute")
      yield* agent.client.notifications.create({ payload: { title: "Weekly digest", body: "12 items" } })

      yield* inTab(tab, async (page) => {
        await page.reload()
        await page.getByText("1 item held; one summary comes when the quiet ends.").waitFor()
        await pageSettled(page)
        assert.deepStrictEqual(await seriousViolations(page), [])
        await page.screenshot({ path: "/tmp/quiet-hours.png", fullPage: true })
        await page.getByRole("button", { name: "Unmute" }).click()
        await page.getByText("Not quiet: pushes arrive as usual.").waitFor()
      })
      const titles = yield* Effect.promise(() =>
        until("the summary", () => Effect.runPromise(Effect.map(app.devices.deliveries({ params: { id: phone.id } }), (d) =>
          d.items.map((i) => ((i.payload as { aps: { alert?: { title?: string } } }).aps.alert?.title ?? "")))), (t) => t.length > 0))
      assert.deepStrictEqual(titles, ["1 notification during quiet hours"])
      assert.deepStrictEqual(tab.errors, [])
    }))
})
