/**
 * The person's keys and phones in Chromium: an API token made on the tokens
 * page (the chosen scopes, the secret shown once and copied) works for an
 * agent until it is revoked on the same page; a phone registered by its app
 * is renamed and removed on the devices page.
 */
import { assert, layer } from "@effect/vitest"
import { HeraldClient } from "@herald/client"
import { Effect } from "effect"
import { Harness, harnessLayer, inTab, makePerson, personApi, signedInTab } from "./support/harness.ts"

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("tokens and devices in the browser", (it) => {
  it.effect("a token made on the tokens page: its secret once, copied, works for an agent until revoked there", () =>
    Effect.gen(function*() {
      const { server } = yield* Harness
      const person = yield* makePerson("Token Maker")
      const tab = yield* signedInTab(person, { permissions: ["clipboard-read", "clipboard-write"] })
      const secret = yield* inTab(tab, async (page) => {
        await page.goto("/tokens")
        await page.getByLabel("Name", { exact: true }).fill("Laptop agent")
        await page.getByRole("checkbox", { name: "devices:read" }).check()
        await page.getByRole("button", { name: "Create token" }).click()
        const field = page.getByLabel("Secret")
        await field.waitFor()
        const value = await field.inputValue()
        await page.getByRole("button", { name: "Copy secret" }).click()
        await page.getByText("Copied", { exact: true }).waitFor()
        const copied = await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText: () => Promise<string> } } }).navigator.clipboard.readText())
        assert.strictEqual(copied, value)
        await page.getByRole("button", { name: "Done" }).click()
        await field.waitFor({ state: "detached" })
        return value
      })
      assert.match(secret, /^hld_/)

      const agent = yield* Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl: server.baseUrl, token: secret, retries: 0 }))
      const status = yield* agent.auth.status()
      assert.strictEqual(status.userId, person.id)
      assert.deepStrictEqual([...status.token.scopes].sort(), ["devices:read", "interactions:create", "interactions:read", "notifications:send"])

      yield* inTab(tab, async (page) => {
        // Shown once: the list never holds the secret again.
        await page.reload()
        const card = page.getByRole("listitem").filter({ hasText: "Laptop agent" })
        await card.waitFor()
        assert.notInclude(await page.locator("body").innerText(), secret)
        await card.getByRole("button", { name: "Revoke" }).click()
        await card.getByRole("button", { name: "Yes, revoke Laptop agent" }).click()
        await card.getByText(/Revoked/).waitFor()
      })
      assert.strictEqual((yield* Effect.flip(agent.auth.status()))._tag, "Unauthorized")
    }))

  it.effect("a phone on the devices page: renamed, then removed", () =>
    Effect.gen(function*() {
      const person = yield* makePerson("Phone Owner")
      const app = yield* personApi(person.session)
      const phone = yield* app.devices.register({ payload: { platform: "ios", deviceName: "iPhone", pushToken: `browser-test-${person.id}` } })
      const tab = yield* signedInTab(person)
      yield* inTab(tab, async (page) => {
        await page.goto("/devices")
        await page.getByRole("button", { name: "Rename iPhone" }).click()
        await page.getByLabel("Name", { exact: true }).fill("Work iPhone")
        await page.getByRole("button", { name: "Save" }).click()
        await page.getByRole("heading", { name: "Work iPhone", level: 3 }).waitFor()
      })
      assert.deepStrictEqual((yield* app.devices.list()).items.map((d) => [d.id, d.deviceName]), [[phone.id, "Work iPhone"]])
      yield* inTab(tab, async (page) => {
        await page.getByRole("button", { name: "Remove", exact: true }).click()
        await page.getByRole("button", { name: "Yes, remove Work iPhone" }).click()
        await page.getByText("No devices yet.").waitFor()
      })
      assert.deepStrictEqual((yield* app.devices.list()).items, [])
    }))
})
