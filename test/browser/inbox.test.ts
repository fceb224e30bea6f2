/**
 * The inbox and prompts in Chromium, as a person sees them while an agent
 * works: a notification appears in the open inbox without a reload (the
 * inbox's server-sent events), each kind of prompt is answered on its page
 * and the agent's long-poll (`GET /interactions/{id}/wait`, started before
 * the click) returns that answer, and a prompt open on the screen says so
 * when the agent cancels it or the person answers on another device.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import type { Page } from "playwright-core"
import { agentOf, harnessLayer, inTab, makePerson, personApi, signedInTab } from "./support/harness.ts"

/** A person with a console tab open on `path`, and their agent able to notify and ask. */
const personAtConsole = (name: string, path: string) =>
  Effect.gen(function*() {
    const person = yield* makePerson(name)
    const { client: agent } = yield* agentOf(person, ["notifications:send", "interactions:create", "interactions:read"])
    const tab = yield* signedInTab(person)
    yield* inTab(tab, async (page) => {
      await page.goto(path)
    })
    return { person, agent, tab }
  })

/** Marks the document, so a later check can tell the page was updated in place, not loaded again. */
const markDocument = (page: Page) => page.evaluate(() => void ((globalThis as { heraldTestMark?: boolean }).heraldTestMark = true))
const sameDocument = (page: Page) => page.evaluate(() => (globalThis as { heraldTestMark?: boolean }).heraldTestMark === true)

/** Presses Tab until the focused element's text includes `text` (at most 60 times); throws when focus never gets there. */
const tabTo = async (page: Page, text: string) => {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab")
    const focused = await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } }).document.activeElement?.textContent ?? "")
    if (focused.includes(text)) return
  }
  throw new Error(`Tab never reached "${text}"`)
}

/** The inbox's stream is connected: its badge says Live. */
const waitLive = (page: Page) => page.locator(".live").getByText("Live", { exact: true }).waitFor()

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("the inbox and prompts in the browser", (it) => {
  it.effect("a notification an agent sends appears in the open inbox without a reload, unread", () =>
    Effect.gen(function*() {
      const { agent, tab } = yield* personAtConsole("Inbox Reader", "/inbox")
      yield* inTab(tab, async (page) => {
        await page.getByText("Nothing yet.").waitFor()
        await waitLive(page)
        await markDocument(page)
      })
      yield* agent.notifications.create({ payload: { title: "Build finished", body: "main is green: 412 tests passed." } })
      yield* inTab(tab, async (page) => {
        const row = page.getByRole("list", { name: "Inbox items" }).getByRole("listitem").filter({ hasText: "Build finished" })
        await row.waitFor()
        assert.include(await row.innerText(), "main is green")
        assert.include(await row.innerText(), "Unread")
        assert.isTrue(await sameDocument(page), "the item came in without a page load")
      })
      // A second one lands on top, still without a reload.
      yield* agent.notifications.create({ payload: { title: "Deploy started", body: "Rolling out 1.4.2." } })
      yield* inTab(tab, async (page) => {
        const rows = page.getByRole("list", { name: "Inbox items" }).getByRole("listitem")
        await rows.filter({ hasText: "Deploy started" }).waitFor()
        assert.deepStrictEqual((await rows.allInnerTexts()).map((t) => t.includes("Deploy started") ? 1 : t.includes("Build finished") ? 2 : 0), [1, 2])
        assert.isTrue(await sameDocument(page))
      })
    }))

  it.effect("an approval opened from the inbox: Approve returns the agent's wait as approved", () =>
    Effect.gen(function*() {
      const { agent, tab } = yield* personAtConsole("Approver", "/inbox")
      yield* inTab(tab, (page) => waitLive(page))
      const { interaction: asked } = yield* agent.interactions.create({
        payload: { kind: "approval", title: "Deploy to production?", prompt: "Release 1.4.2 to eu-west." }
      })
      const waiting = yield* Effect.forkChild(agent.interactions.wait({ params: { id: asked.id }, query: { timeout: 60 } }))
      yield* inTab(tab, async (page) => {
        await page.getByRole("link", { name: /Deploy to production\?/ }).click()
        await page.getByText("Release 1.4.2 to eu-west.").waitFor()
        await page.getByText(/^Expires /).waitFor()
        await page.getByRole("button", { name: "Approve" }).click()
        await page.getByRole("status").filter({ hasText: "your answer was sent" }).waitFor()
        assert.include(await page.getByRole("status").filter({ hasText: "your answer was sent" }).innerText(), "Approved")
        assert.strictEqual(await page.getByRole("button", { name: "Approve" }).count(), 0, "no buttons once answered")
      })
      const answered = yield* Fiber.join(waiting)
      assert.deepStrictEqual([answered.id, answered.status], [asked.id, "approved"])
    }))

  it.effect("by keyboard alone: Tab to the prompt in the inbox, Enter, Tab to Approve, Enter", () =>
    Effect.gen(function*() {
      const { agent, tab } = yield* personAtConsole("Keyboard User", "/inbox")
      const { interaction: asked } = yield* agent.interactions.create({
        payload: { kind: "approval", title: "Restart the worker?", prompt: "It has used 95% of its memory for an hour." }
      })
      const waiting = yield* Effect.forkChild(agent.interactions.wait({ params: { id: asked.id }, query: { timeout: 60 } }))
      yield* inTab(tab, async (page) => {
        await page.getByRole("link", { name: /Restart the worker\?/ }).waitFor()
        await tabTo(page, "Restart the worker?")
        await page.keyboard.press("Enter")
        await page.getByText("It has used 95% of its memory for an hour.").waitFor()
        await tabTo(page, "Approve")
        await page.keyboard.press("Enter")
        await page.getByRole("status").filter({ hasText: "your answer was sent" }).waitFor()
      })
      assert.strictEqual((yield* Fiber.join(waiting)).status, "approved")
    }))

  it.effect("yes/no, a free reply and a reply picked from choices: each returns the agent's wait with the answer", () =>
    Effect.gen(function*() {
      const person = yield* makePerson("Answerer")
      const { client: agent } = yield* agentOf(person, ["interactions:create", "interactions:read"])
      const tab = yield* signedInTab(person)
      const cases: ReadonlyArray<{
        readonly ask: Parameters<typeof agent.interactions.create>[0]["payload"]
        readonly answer: (page: Page) => Promise<void>
        readonly expect: readonly [string, string | null]
      }> = [
        {
          ask: { kind: "yes_no", title: "Is the build green?", prompt: "CI finished on main." },
          answer: (page) => page.getByRole("button", { name: "No" }).click(),
          expect: ["no", null]
        },
        {
          ask: { kind: "reply", title: "Which branch?", prompt: "Name the branch to release from." },
          answer: async (page) => {
            await page.getByLabel("Your reply").fill("release/1.4")
            await page.getByRole("button", { name: "Send reply" }).click()
          },
          expect: ["replied", "release/1.4"]
        },
        {
          ask: { kind: "reply", title: "Where to deploy?", prompt: "Pick the environment.", choices: ["Staging", "Production"] },
          answer: (page) => page.getByRole("group", { name: "Choices" }).getByRole("button", { name: "Staging" }).click(),
          expect: ["replied", "Staging"]
        }
      ]
      for (const { ask, answer, expect } of cases) {
        const { interaction: asked } = yield* agent.interactions.create({ payload: ask })
        const waiting = yield* Effect.forkChild(agent.interactions.wait({ params: { id: asked.id }, query: { timeout: 60 } }))
        yield* inTab(tab, async (page) => {
          await page.goto(`/prompts/${asked.id}`)
          await page.getByRole("heading", { name: ask.title, level: 1 }).waitFor()
          await page.getByText(ask.prompt).waitFor()
          await answer(page)
          await page.getByRole("status").filter({ hasText: "your answer was sent" }).waitFor()
        })
        const answered = yield* Fiber.join(waiting)
        assert.deepStrictEqual([answered.status, answered.response ?? null], [...expect], ask.title)
      }
    }))

  it.effect("a prompt on the screen says so when the agent cancels it or the person answers on another device", () =>
    Effect.gen(function*() {
      const person = yield* makePerson("Watcher")
      const { client: agent } = yield* agentOf(person, ["interactions:create", "interactions:read"])
      const tab = yield* signedInTab(person)
      const phone = yield* personApi(person.session)

      const { interaction: canceled } = yield* agent.interactions.create({ payload: { kind: "yes_no", title: "Run the migration?", prompt: "0042_users." } })
      yield* openPrompt(tab.page, canceled.id, "Yes")
      yield* agent.interactions.cancel({ params: { id: canceled.id } })
      yield* inTab(tab, async (page) => {
        await page.getByRole("status").filter({ hasText: "The agent canceled this prompt" }).waitFor()
        assert.strictEqual(await page.getByRole("button", { name: "Yes" }).count(), 0)
      })

      const { interaction: elsewhere } = yield* agent.interactions.create({ payload: { kind: "approval", title: "Rotate the keys?", prompt: "All API keys." } })
      yield* openPrompt(tab.page, elsewhere.id, "Approve")
      yield* phone.interactions.answer({ params: { id: elsewhere.id }, payload: { status: "denied" } })
      yield* inTab(tab, async (page) => {
        const note = page.getByRole("status").filter({ hasText: "answered elsewhere" })
        await note.waitFor()
        assert.include(await note.innerText(), "Denied")
        assert.strictEqual(await page.getByRole("button", { name: "Approve" }).count(), 0)
      })
    }))
})

/** Opens a prompt's page and waits until it offers `button` and its live stream is connected. */
const openPrompt = (page: Page, id: string, button: string) =>
  Effect.promise(async () => {
    const streaming = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/app/inbox/stream" && r.status() === 200)
    await page.goto(`/prompts/${id}`)
    await page.getByRole("button", { name: button, exact: true }).waitFor()
    await streaming
  })
