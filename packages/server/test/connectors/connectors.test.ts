/**
 * Tunnel connectors over HTTP with the typed client: register (secret once),
 * read (never the secret), update (name, routes, on-call group), remove,
 * heartbeat and the 90-second online window, rotate-secret, and limits.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { CONNECTOR_MAX_ROUTES, CONNECTORS_MAX_PER_PERSON } from "../../src/config/Limits.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles, seedTeam } from "../../../../test/support/teams.ts"
import { clientOf, connectorBody, outcome, raw, secretOf, seedOncallGroup } from "./support.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("tunnel connectors", (it) => {
  it.effect("create shows the callback secret once; reads never show it", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("conn-owner")
      const client = yield* clientOf(owner)
      const created = yield* client.connectors.create({ payload: connectorBody() })
      assert.match(created.connector.id, /^conn_/)
      assert.match(created.callbackSecret, /^hcb_[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(created.connector.name, "Home lab")
      assert.deepStrictEqual(created.connector.routes, connectorBody().routes)
      assert.isNull(created.connector.oncallGroupId)
      assert.isFalse(created.connector.online)
      assert.isNull(created.connector.lastSeenAt)

      const listed = yield* client.connectors.list()
      assert.deepStrictEqual(listed.items.map((c) => c.id), [created.connector.id])
      const one = yield* client.connectors.get({ params: { id: created.connector.id } })
      assert.deepStrictEqual(one, created.connector)

      // Not over the wire, and not at rest in the clear.
      const secret = yield* secretOf(owner)
      for (const path of ["/connectors", `/connectors/${created.connector.id}`]) {
        const answer = yield* raw(secret, "GET", path)
        assert.strictEqual(answer.status, 200)
        assert.notInclude(JSON.stringify(answer.body), "hcb_")
        assert.notInclude(JSON.stringify(answer.body), created.callbackSecret)
      }
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ secretSealed: string }>`SELECT secret_sealed FROM connectors WHERE id = ${created.connector.id}`
      assert.match(rows[0]!.secretSealed, /^v1\./)
      assert.notInclude(rows[0]!.secretSealed, created.callbackSecret.slice(4))
    }))

  it.effect("update replaces name and routes; delete removes; rotate-secret gives a new secret once", () =>
    Effect.gen(function*() {
      const client = yield* clientOf(yield* makePerson("conn-owner"))
      const { connector, callbackSecret } = yield* client.connectors.create({ payload: connectorBody() })
      const renamed = yield* client.connectors.update({
        params: { id: connector.id },
        payload: { name: "Office", routes: [{ pathPrefix: "/", upstream: "https://nas.local" }] }
      })
      assert.strictEqual(renamed.name, "Office")
      assert.deepStrictEqual(renamed.routes, [{ pathPrefix: "/", upstream: "https://nas.local" }])
      const kept = yield* client.connectors.update({ params: { id: connector.id }, payload: {} })
      assert.strictEqual(kept.name, "Office")

      const rotated = yield* client.connectors.rotateSecret({ params: { id: connector.id } })
      assert.match(rotated.callbackSecret, /^hcb_/)
      assert.notStrictEqual(rotated.callbackSecret, callbackSecret)
      assert.strictEqual(rotated.connector.id, connector.id)

      const removed = yield* client.connectors.remove({ params: { id: connector.id } })
      assert.deepStrictEqual(removed, { ok: true })
      assert.strictEqual(yield* outcome(client.connectors.get({ params: { id: connector.id } })), "NotFound")
      assert.strictEqual(yield* outcome(client.connectors.remove({ params: { id: connector.id } })), "NotFound")
    }))

  it.effect("heartbeat marks online; online while the last heartbeat is under 90 s old", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const client = yield* clientOf(yield* makePerson("conn-owner"))
      const { connector } = yield* client.connectors.create({ payload: connectorBody() })
      const beat = yield* client.connectors.heartbeat({ params: { id: connector.id } })
      assert.isTrue(beat.online)
      assert.isNotNull(beat.lastSeenAt)
      assert.isTrue((yield* client.connectors.get({ params: { id: connector.id } })).online)

      yield* sql`UPDATE connectors SET last_seen_at = now() - interval '85 seconds' WHERE id = ${connector.id}`
      assert.isTrue((yield* client.connectors.get({ params: { id: connector.id } })).online)
      yield* sql`UPDATE connectors SET last_seen_at = now() - interval '91 seconds' WHERE id = ${connector.id}`
      const stale = yield* client.connectors.get({ params: { id: connector.id } })
      assert.isFalse(stale.online)
      assert.isFalse((yield* client.connectors.list()).items[0]!.online)
      assert.isTrue((yield* client.connectors.heartbeat({ params: { id: connector.id } })).online)
    }))

  it.effect("an on-call group only of the caller's own teams; null clears it", () =>
    Effect.gen(function*() {
      const { member, outsider, teamId } = yield* seedRoles("team")
      const groupId = yield* seedOncallGroup(teamId)
      const memberClient = yield* clientOf(member)
      const linked = yield* memberClient.connectors.create({ payload: connectorBody({ oncallGroupId: groupId }) })
      assert.strictEqual(linked.connector.oncallGroupId, groupId)
      const cleared = yield* memberClient.connectors.update({ params: { id: linked.connector.id }, payload: { oncallGroupId: null } })
      assert.isNull(cleared.oncallGroupId)

      const outsiderClient = yield* clientOf(outsider)
      assert.strictEqual(yield* outcome(outsiderClient.connectors.create({ payload: connectorBody({ oncallGroupId: groupId }) })), "NotFound")
      const own = yield* outsiderClient.connectors.create({ payload: connectorBody() })
      assert.strictEqual(
        yield* outcome(outsiderClient.connectors.update({ params: { id: own.connector.id }, payload: { oncallGroupId: groupId } })),
        "NotFound"
      )
      assert.strictEqual(yield* outcome(memberClient.connectors.create({ payload: connectorBody({ oncallGroupId: "ocg_nosuchgroup" }) })), "NotFound")
      // Another team of the outsider's: its group is theirs to name.
      const other = yield* seedTeam({ owner: outsider })
      const theirs = yield* seedOncallGroup(other.teamId)
      const relinked = yield* outsiderClient.connectors.update({ params: { id: own.connector.id }, payload: { oncallGroupId: theirs } })
      assert.strictEqual(relinked.oncallGroupId, theirs)
    }))

  it.effect("limits: routes per connector at the bound, connectors per person", () =>
    Effect.gen(function*() {
      const client = yield* clientOf(yield* makePerson("conn-owner"))
      const route = (i: number) => ({ pathPrefix: `/r${i}`, upstream: "http://127.0.0.1:9000" })
      const routes = Array.from({ length: CONNECTOR_MAX_ROUTES }, (_, i) => route(i))
      const full = yield* client.connectors.create({ payload: connectorBody({ routes }) })
      assert.lengthOf(full.connector.routes, CONNECTOR_MAX_ROUTES)
      // Bodies the typed client refuses to send go raw: the server answers 400 naming the field.
      const owner = yield* makePerson("conn-raw")
      const secret = yield* secretOf(owner)
      const refused = [
        { routes: [...routes, route(99)] },
        { routes: [] },
        { routes: [{ pathPrefix: "grafana", upstream: "http://x.test" }] },
        { routes: [{ pathPrefix: "/g", upstream: "ftp://x.test" }] },
        { routes: [{ pathPrefix: "/g", upstream: "http://x.test", extra: 1 }] },
        { name: "" },
        { name: "x".repeat(101) }
      ]
      for (const over of refused) {
        const answer = yield* raw(secret, "POST", "/connectors", { ...connectorBody(), ...over })
        assert.deepStrictEqual([answer.status, answer.code], [400, "VALIDATION_FAILED"], JSON.stringify(over))
      }
      const longest = yield* raw(secret, "POST", "/connectors", {
        name: "x".repeat(100),
        routes: [{ pathPrefix: `/${"p".repeat(199)}`, upstream: `http://h.test/${"u".repeat(2048 - 14)}` }]
      })
      assert.strictEqual(longest.status, 201)
      const tooLong = yield* raw(secret, "POST", "/connectors", {
        name: "n",
        routes: [{ pathPrefix: `/${"p".repeat(200)}`, upstream: "http://h.test" }]
      })
      assert.strictEqual(tooLong.status, 400)
      for (let i = 1; i < CONNECTORS_MAX_PER_PERSON; i++) yield* client.connectors.create({ payload: connectorBody() })
      const over = yield* client.connectors.create({ payload: connectorBody() }).pipe(Effect.flip)
      assert.strictEqual(over._tag, "LimitReached")
      if (over._tag === "LimitReached") assert.strictEqual(over.limit, CONNECTORS_MAX_PER_PERSON)
    }))
})
