/**
 * Families and on-call in Chromium: an owner invites from the team page, the
 * invited person opens the link signed out, signs in by the e-mailed link,
 * comes back to `/join/<code>`, sees what they join and accepts; and a page
 * acknowledged on the on-call page stops its escalation (the Agent API says
 * `acknowledged`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { agentOf, harnessLayer, inTab, mailTo, makePerson, openTab, signedInTab } from "./support/harness.ts"

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("families and on-call in the browser", (it) => {
  it.effect("an invite made on the team page: the link, opened signed out, leads through sign-in to joining", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("Olivia Owner")
      const invited = yield* makePerson("Ian Invited")
      const { client: agent } = yield* agentOf(owner, ["teams:read", "teams:write"])
      const family = yield* agent.teams.create({ payload: { kind: "family", name: "The Owners" } })

      const ownerTab = yield* signedInTab(owner)
      const link = yield* inTab(ownerTab, async (page) => {
        await page.goto(`/teams/${family.id}`)
        await page.getByRole("heading", { name: "The Owners", level: 1 }).waitFor()
        await page.getByLabel("E-mail address or domain").fill(invited.email)
        await page.getByRole("button", { name: "Invite", exact: true }).click()
        const note = page.getByRole("status").filter({ hasText: "Send this link" })
        await note.waitFor()
        return note.getByRole("link").getAttribute("href")
      })
      assert.isNotNull(link)
      const url = new URL(link!)
      assert.match(url.pathname, /^\/join\/[^/]+$/)

      // The invited person opens the link in a browser where nobody is signed in.
      const tab = yield* openTab()
      yield* inTab(tab, async (page) => {
        await page.goto(link!)
        await page.waitForURL("**/sign-in")
        await page.getByLabel("E-mail address").fill(invited.email)
        await page.getByRole("button", { name: "Send me a sign-in link" }).click()
        await page.getByRole("status").filter({ hasText: "sign-in link is on its way" }).waitFor()
      })
      const mail = yield* mailTo(invited.email)
      const signInLink = /https?:\/\/\S+\/api\/app\/auth\/link\?token=\S+/.exec(mail.text)?.[0]
      assert.isDefined(signInLink, mail.text)
      yield* inTab(tab, async (page) => {
        await page.goto(signInLink!)
        // Signed in, back at the invite: what is joined, and from whom.
        await page.waitForURL(`**${url.pathname}`)
        await page.getByRole("heading", { name: "Join The Owners", level: 1 }).waitFor()
        await page.getByText(/Olivia Owner.*invites you to the family/).waitFor()
        await page.getByRole("button", { name: "Accept and join" }).click()
        await page.waitForURL(`**/teams/${family.id}`)
        const members = page.getByRole("region", { name: "Members" })
        await members.getByText("Ian Invited").waitFor()
        await members.getByText("Olivia Owner").waitFor()
      })
      const detail = yield* agent.teams.get({ params: { id: family.id } })
      assert.deepStrictEqual(detail.members.map((m) => [m.name, m.role]).sort(), [["Ian Invited", "member"], ["Olivia Owner", "owner"]])
    }))

  it.effect("a page acknowledged on the on-call page: the Agent API says acknowledged, by that person", () =>
    Effect.gen(function*() {
      const person = yield* makePerson("Pat Oncall")
      const { client: agent } = yield* agentOf(person, ["teams:read", "teams:write", "oncall:read", "oncall:write"])
      const family = yield* agent.teams.create({ payload: { kind: "family", name: "Home" } })
      const group = yield* agent.oncall.create({
        params: { id: family.id },
        payload: {
          name: "House alarms",
          rotation: { members: [person.id], period: "weekly", handoffAt: "09:00", timezone: "UTC", startsAt: new Date(Date.now() - 60_000).toISOString() },
          escalation: [{ afterMinutes: 5, target: "group" }]
        }
      })
      const { page: paged } = yield* agent.pages.create({
        params: { groupId: group.id },
        payload: { title: "Basement flooding", body: "The sump pump alarm went off." }
      })
      assert.strictEqual(paged.status, "triggered")

      const tab = yield* signedInTab(person)
      yield* inTab(tab, async (page) => {
        await page.goto("/oncall")
        const groups = page.getByRole("region", { name: "Who is on call" })
        await groups.getByText("House alarms").waitFor()
        const card = page.getByRole("region", { name: "Open pages" }).getByRole("listitem").filter({ hasText: "Basement flooding" })
        await card.getByText("The sump pump alarm went off.").waitFor()
        await card.getByRole("button", { name: "Acknowledge" }).click()
        await page.getByRole("region", { name: "Open pages" }).getByRole("button", { name: "Acknowledge" }).waitFor({ state: "detached" })
      })
      const acknowledged = yield* agent.pages.get({ params: { id: paged.id } })
      assert.strictEqual(acknowledged.status, "acknowledged")
      assert.strictEqual(acknowledged.acknowledgedBy, person.id)
      assert.isNotNull(acknowledged.acknowledgedAt)
    }))
})
