/**
 * The console's other reads in the Person API: one prompt in any state (the
 * prompt page), the person's live activities from every source with the text
 * budgets of their cards, their web apps, and a mini-app package for its
 * install page with its signature checked. Another person's resource answers
 * 404 like a missing one.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { agentClient, makeAgent, makePerson, personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { Signing } from "../../src/miniApps/Signing.ts"
import { archiveFor, publishRaw } from "../miniApps/support.ts"
import { phone, start } from "./activitySupport.ts"

const tagOf = <A, E extends { readonly _tag: string }, R>(call: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.result(call), (r) => r._tag === "Success" ? "ok" : r.failure._tag)

/** GET on the Person API as raw HTTP: status and body, to compare refusals exactly. */
const get = (session: string, path: string) => rawFetch(`/api/app${path}`, { headers: { authorization: `Bearer ${session}` } })

layer(TestServerLayer, { timeout: "180 seconds", excludeTestServices: true })("person reads", (it) => {
  it.effect("a prompt of mine in any state, with who asks; another person's answers 404 like a missing one", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["interactions:create", "interactions:read"])
      const other = yield* makePerson("other")
      const { interaction } = yield* agent.client.interactions.create({
        payload: { kind: "reply", title: "Name it", prompt: "What should the release be called?", choices: ["Aster", "Birch"] }
      })
      const pending = yield* agent.app.interactions.get({ params: { id: interaction.id } })
      assert.strictEqual(pending.status, "pending")
      assert.strictEqual(pending.sourceName, "test agent")
      assert.deepStrictEqual(pending.choices, ["Aster", "Birch"])
      assert.strictEqual(pending.expiresAt, interaction.expiresAt)

      yield* agent.app.interactions.answer({ params: { id: interaction.id }, payload: { status: "replied", response: "Aster" } })
      const answered = yield* agent.app.interactions.get({ params: { id: interaction.id } })
      assert.deepStrictEqual([answered.status, answered.response, answered.respondingUserId], ["replied", "Aster", agent.person.id])

      const second = yield* agent.client.interactions.create({ payload: { kind: "yes_no", title: "Go?", prompt: "p" } })
      yield* agent.client.interactions.cancel({ params: { id: second.interaction.id } })
      const canceled = yield* agent.app.interactions.get({ params: { id: second.interaction.id } })
      assert.strictEqual(canceled.status, "canceled")
      assert.isNotNull(canceled.canceledAt)

      const foreign = yield* get(other.session, `/interactions/${interaction.id}`)
      const missing = yield* get(other.session, "/interactions/int_000000000000000000000000")
      assert.strictEqual(foreign.status, 404)
      assert.deepStrictEqual(foreign.body, missing.body)
    }))

  it.effect("my live activities from every source, live ones first, with their layout's text budgets", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["activities:read", "activities:write"])
      const other = yield* makePerson("other")
      yield* phone(agent, "android")
      const ended = yield* start(agent, { props: { title: "Backup", progress: 0.2 } })
      yield* agent.client.activities.end({ params: { identifier: ended.activity.id } })
      // A second token of the same person: another source, the same person's activities.
      const created = yield* agent.app.tokens.create({ payload: { name: "second", scopes: ["activities:write"] } })
      const second = yield* agentClient(created.secret)
      const live = yield* second.activities.start({
        payload: { props: { title: "A terminal title that runs past thirty-six characters", layout: "terminal", status: "building" } }
      })

      const { items } = yield* agent.app.activities.list()
      assert.deepStrictEqual(items.map((a) => [a.id, a.status === "ended"]), [[live.activity.id, false], [ended.activity.id, true]])
      const [terminal, standard] = items
      assert.deepStrictEqual({ ...terminal!.budgets }, { layout: "terminal", title: 36, line2: 40, detail: 100, compactStatus: 0 })
      assert.deepStrictEqual(terminal!.budgetWarnings.map((w) => [w.field, w.budget]), [["title", 36], ["status", 0]])
      assert.strictEqual(terminal!.props.layout, "terminal")
      assert.deepStrictEqual({ ...standard!.budgets }, { layout: "standard", title: 32, line2: 36, detail: 100, compactStatus: 8 })
      assert.deepStrictEqual(standard!.budgetWarnings, [])
      assert.deepStrictEqual((yield* (yield* personClient(other.session)).activities.list()).items, [])
    }))

  it.effect("my web apps and one of them; another person's app answers 404", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["apps:write", "apps:read"])
      const other = yield* makePerson("other")
      const created = yield* agent.client.apps.create({ payload: { name: "Board", url: "https://board.example.test/" } })
      const listed = yield* agent.app.apps.list()
      assert.deepStrictEqual(listed.items.map((a) => [a.id, a.consentedAt]), [[created.id, null]])
      yield* agent.app.apps.consent({ params: { id: created.id } })
      assert.isNotNull((yield* agent.app.apps.get({ params: { id: created.id } })).consentedAt)
      const foreign = yield* get(other.session, `/apps/${created.id}`)
      const missing = yield* get(other.session, "/apps/app_000000000000000000000000")
      assert.strictEqual(foreign.status, 404)
      assert.deepStrictEqual(foreign.body, missing.body)
    }))

  it.effect("a mini-app package for its install page: its signature checked against current and retired keys", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const signing = yield* Signing
      const agent = yield* makeAgent(["apps:read", "apps:write"])
      const other = yield* makePerson("other")
      const published = yield* publishRaw(agent.secret, JSON.stringify(archiveFor(agent.person.id)))
      assert.strictEqual(published.status, 201)
      const packageId = published.body.packageId as string
      const [current] = yield* signing.keys

      const view = yield* agent.app.miniApps.get({ params: { packageId } })
      assert.strictEqual(view.package.packageId, packageId)
      assert.strictEqual(view.package.manifest.publisher.id, agent.person.id)
      assert.match(view.package.installUrl, new RegExp(`/mini-apps/${packageId}/install$`))
      assert.deepStrictEqual({ ...view.signature }, {
        algorithm: "Ed25519",
        verified: true,
        keyId: current!.keyId,
        publicKey: current!.publicKey,
        keyRetired: false
      })
      assert.isTrue(view.installable)

      // A rotation retires the key: what it signed still verifies.
      yield* signing.rotate
      const after = yield* agent.app.miniApps.get({ params: { packageId } })
      assert.isTrue(after.signature.verified)
      assert.strictEqual(after.signature.keyId, current!.keyId)
      assert.isTrue(after.signature.keyRetired)

      // A signature no key made: shown, not installable.
      yield* sql`UPDATE mini_app_packages SET signature = ${Buffer.alloc(64, 7).toString("base64url")} WHERE id = ${packageId}`
      const forged = yield* agent.app.miniApps.get({ params: { packageId } })
      assert.deepStrictEqual([forged.signature.verified, forged.signature.keyId, forged.installable], [false, null, false])

      const foreign = yield* get(other.session, `/mini-apps/${packageId}`)
      const missing = yield* get(other.session, "/mini-apps/pkg_000000000000000000000000")
      assert.strictEqual(foreign.status, 404)
      assert.deepStrictEqual(foreign.body, missing.body)
      assert.strictEqual(yield* tagOf(agent.app.miniApps.get({ params: { packageId: "pkg_000000000000000000000000" } })), "NotFound")
    }))
})
