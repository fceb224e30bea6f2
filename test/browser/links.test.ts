/**
 * Every link Herald hands out opens a page in the browser — `/`, an invite's
 * `/join/<code>`, a mini-app's `installUrl`, a sign-in link — and the main
 * pages of the console have no serious or critical accessibility violations
 * (axe-core) at a phone's width and a desktop's.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import type { Page } from "playwright-core"
import { cliJson } from "../support/process.ts"
import { pageSettled, seriousViolations } from "./support/axe.ts"
import type { Violation } from "./support/axe.ts"
import { Harness, harnessLayer, inTab, openTab, signedInTab } from "./support/harness.ts"
import { seedSample } from "./support/sampleData.ts"

const sample = Effect.flatMap(Harness, ({ server, cliEnv }) => seedSample(server.baseUrl, cliEnv))

/** Opens `url` and answers the document's status and type: a page, not the JSON 404 of an unknown path. */
const open = async (page: Page, url: string) => {
  const response = await page.goto(url)
  return { status: response?.status(), type: response?.headers()["content-type"] ?? "" }
}

export const phone = { width: 390, height: 844 }
export const desktop = { width: 1280, height: 800 }

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("links and pages in the browser", (it) => {
  it.effect("every link Herald hands out opens a page: /, /join/<code>, a mini-app's installUrl, a sign-in link", () =>
    Effect.gen(function*() {
      const { origin, cliEnv } = yield* Harness
      const seeded = yield* sample
      for (const link of [seeded.inviteUrl, seeded.installUrl]) assert.strictEqual(new URL(link).origin, origin, link)
      // The operator's sign-in link (`herald admin session link`, below) is made while the browser opens the others.
      const linking = yield* Effect.forkChild(cliJson<{ url: string }>(["admin", "session", "link", "--user", seeded.person.email], cliEnv))

      // `/` signed out: the sign-in page.
      const stranger = yield* openTab()
      yield* inTab(stranger, async (page) => {
        const root = await open(page, "/")
        assert.deepStrictEqual([root.status, root.type.startsWith("text/html")], [200, true])
        await page.waitForURL("**/sign-in")
        await page.getByRole("heading", { name: "Sign in to Herald", level: 1 }).waitFor()
      })

      const tab = yield* signedInTab(seeded.person)
      yield* inTab(tab, async (page) => {
        // `/` signed in: the inbox.
        await open(page, "/")
        await page.waitForURL("**/inbox")
        await page.getByRole("heading", { name: "Inbox", level: 1 }).waitFor()

        const join = await open(page, seeded.inviteUrl)
        assert.deepStrictEqual([join.status, join.type.startsWith("text/html")], [200, true])
        await page.getByRole("heading", { name: "Join The Lovelaces", level: 1 }).waitFor()

        const install = await open(page, seeded.installUrl)
        assert.deepStrictEqual([install.status, install.type.startsWith("text/html")], [200, true])
        await page.getByRole("heading", { name: "Grocery list 1.2.0", level: 1 }).waitFor()
        await page.getByRole("status").filter({ hasText: "The signature verifies" }).waitFor()
      })

      // The operator's sign-in link (`herald admin session link`) signs a browser in.
      const link = yield* Fiber.join(linking)
      assert.strictEqual(new URL(link.url).origin, origin)
      const other = yield* openTab()
      yield* inTab(other, async (page) => {
        const signIn = await open(page, link.url)
        assert.strictEqual(signIn.status, 200)
        await page.getByText(`Signed in as ${seeded.person.name}`).waitFor()
        await open(page, "/settings")
        await page.getByText(seeded.person.email).waitFor()
      })
    }))

  it.effect("the console is installable: Chromium finds its manifest, icons and service worker good enough to install", () =>
    Effect.gen(function*() {
      const seeded = yield* sample
      const tab = yield* signedInTab(seeded.person)
      yield* inTab(tab, async (page) => {
        await page.goto("/inbox")
        await pageSettled(page)
        await page.evaluate(() => (globalThis as unknown as { navigator: { serviceWorker: { ready: Promise<unknown> } } }).navigator.serviceWorker.ready)
        const cdp = await tab.context.newCDPSession(page)
        const manifest = await cdp.send("Page.getAppManifest")
        assert.deepStrictEqual(manifest.errors, [], "the manifest parses")
        assert.match(manifest.url, /\/manifest\.webmanifest$/)
        const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors")
        // A test's profile is off the record, which alone forbids installing: every other check must pass.
        assert.deepStrictEqual(installabilityErrors.filter((e) => e.errorId !== "in-incognito"), [])
      })
    }))

  it.effect("the main pages have no serious or critical axe-core violations, at a phone's width and a desktop's", () =>
    Effect.gen(function*() {
      const { origin } = yield* Harness
      const seeded = yield* sample
      const paths = [
        "/inbox",
        `/prompts/${seeded.promptId}`,
        `/prompts/${seeded.choicesPromptId}`,
        "/activities",
        "/devices",
        "/tokens",
        "/teams",
        `/teams/${seeded.familyId}`,
        `/join/${seeded.inviteCode}`,
        "/oncall",
        "/apps",
        new URL(seeded.installUrl).pathname,
        "/settings"
      ]
      const found: Array<string> = []
      const report = (viewport: string, path: string, violations: ReadonlyArray<Violation>) => {
        for (const v of violations) found.push(`${viewport} ${path}: [${v.impact}] ${v.id} — ${v.help}\n    ${v.nodes.slice(0, 5).join("\n    ")}`)
      }
      // The two widths are two profiles that share nothing: they run side by side.
      const atWidth = (name: string, viewport: typeof phone) =>
        Effect.gen(function*() {
          const signedOut = yield* openTab({ viewport })
          yield* inTab(signedOut, async (page) => {
            await page.goto("/sign-in")
            await pageSettled(page)
            report(name, "/sign-in", await seriousViolations(page))
          })
          const tab = yield* signedInTab(seeded.person, { viewport })
          // The strict Content-Security-Policy holds: nothing is asked of another origin, nothing is refused.
          const elsewhere: Array<string> = []
          tab.context.on("request", (request) => {
            if (new URL(request.url()).origin !== origin) elsewhere.push(request.url())
          })
          yield* inTab(tab, async (page) => {
            for (const path of paths) {
              await page.goto(path)
              await pageSettled(page)
              report(name, path, await seriousViolations(page))
            }
          })
          assert.deepStrictEqual(elsewhere, [], `${name}: requests to another origin`)
          assert.deepStrictEqual(tab.consoleErrors.filter((e) => e.includes("Content Security Policy")), [], `${name}: CSP refusals`)
        })
      yield* Effect.all([atWidth("phone", phone), atWidth("desktop", desktop)], { concurrency: "unbounded", discard: true })
      assert.deepStrictEqual(found, [], `axe-core found serious or critical violations:\n${found.join("\n")}`)
    }))
})
