/**
 * The e-mail page in Chromium: a person turns the channel on with prompts
 * mailed after 15 minutes; the verification mail (a real SMTP server) carries
 * a link whose page confirms the address only with its button; the page then
 * says the channel is on and confirmed, and the Person API agrees. No serious
 * accessibility violation; a screenshot is kept for review.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { pageSettled, seriousViolations } from "./support/axe.ts"
import { Harness, harnessLayer, inTab, makePerson, personApi, signedInTab, until } from "./support/harness.ts"

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("the e-mail channel in the browser", (it) => {
  it.effect("turned on, the address confirmed from the mailed link", () =>
    Effect.gen(function*() {
      const { smtp } = yield* Harness
      const person = yield* makePerson("Mail Person")
      const app = yield* personApi(person.session)
      const tab = yield* signedInTab(person)

      yield* inTab(tab, async (page) => {
        await page.goto("/email")
        await page.getByText("Off: nothing is mailed.").waitFor()
        await page.getByLabel("Use e-mail when my phone is not enough").check()
        await page.getByLabel("Mail me any prompt still waiting after").check()
        await page.getByLabel("minutes").fill("15")
        await page.getByRole("button", { name: "Save" }).click()
        await page.getByText("Saved. Check your mail to confirm the address.").waitFor()
        await page.getByText(/On, but your address is not confirmed yet/).waitFor()
      })
      const saved = yield* app.emailChannel.get()
      assert.deepStrictEqual([saved.enabled, saved.verified, saved.promptAfterSeconds, saved.pages], [true, false, 900, true])

      const mail = yield* Effect.promise(() => until("the verification mail", async () => smtp.to(person.email), (m) => m.length > 0))
      const link = /http:\/\/localhost:\d+\/answer\/\S+/.exec(mail[0]!.text)?.[0]
      assert.isDefined(link, mail[0]!.text)

      yield* inTab(tab, async (page) => {
        await page.goto(new URL(link!).pathname)
        await page.getByRole("button", { name: "Confirm address" }).waitFor()
        await page.screenshot({ path: "/tmp/email-confirm.png", fullPage: true })
        await page.getByRole("button", { name: "Confirm address" }).click()
        await page.getByText("Herald may now mail you prompts and pages").waitFor()
        await page.goto("/email")
        await page.getByText("On, and your address is confirmed.").waitFor()
        await pageSettled(page)
        assert.deepStrictEqual(await seriousViolations(page), [])
        await page.screenshot({ path: "/tmp/email.png", fullPage: true })
      })
      assert.isTrue((yield* app.emailChannel.get()).verified)
      assert.deepStrictEqual(tab.errors, [])
    }))
})
