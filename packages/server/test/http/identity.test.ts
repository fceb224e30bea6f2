/**
 * Tokens and devices through both faces: the Person API creates and lists,
 * the Agent API lists and revokes; another account's resource is 404 exactly
 * like a missing one.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, makePerson, personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"

const iosDevice = (pushToken: string) => ({
  platform: "ios" as const,
  deviceName: "Ada's iPhone",
  pushToken,
  liveActivitiesCapable: true,
  interactiveLiveActivitiesCapable: true,
  liveActivityTokenEnvironment: "production" as const
})

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("identity", (it) => {
  it.effect("the Person API shows the signed-in person", () =>
    Effect.gen(function*() {
      const { person, session } = yield* makePerson("ada")
      const app = yield* personClient(session)
      const me = yield* app.me.get()
      assert.deepStrictEqual({ id: me.id, email: me.email, name: me.name }, { id: person.id, email: person.email, name: "ada" })
    }))

  it.effect("a created token's secret is shown once and never listed", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const app = yield* personClient(session)
      const created = yield* app.tokens.create({ payload: { name: "ci", scopes: ["devices:read", "devices:read", "tokens:manage"] } })
      assert.match(created.secret, /^hld_[0-9A-Za-z]{49}$/)
      assert.deepStrictEqual([...created.token.scopes], ["devices:read", "tokens:manage"])
      assert.strictEqual(created.token.kind, "token")
      assert.strictEqual(created.token.oauthClient, null)
      assert.strictEqual(created.token.revokedAt, null)
      const listed = yield* app.tokens.list()
      assert.strictEqual(listed.items.length, 1)
      const raw = yield* rawFetch("/api/app/tokens", { headers: { authorization: `Bearer ${session}` } })
      assert.notInclude(JSON.stringify(raw.body), created.secret)
      assert.notInclude(JSON.stringify(raw.body), created.secret.slice(12))
    }))

  it.effect("GET /tokens lists the account's tokens newest first; DELETE revokes another token", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["tokens:manage"])
      const other = yield* agent.app.tokens.create({ payload: { name: "other", scopes: [] } })
      const listed = yield* agent.client.tokens.list()
      assert.deepStrictEqual(listed.items.map((t) => t.name), ["other", "test agent"])
      const revoked = yield* agent.client.tokens.revoke({ params: { id: other.token.id } })
      assert.deepStrictEqual(revoked, { ok: true })
      const again = yield* agent.client.tokens.revoke({ params: { id: other.token.id } })
      assert.deepStrictEqual(again, { ok: true })
      const after = yield* agent.client.tokens.list()
      assert.isString(after.items.find((t) => t.id === other.token.id)?.revokedAt)
      assert.isNull(after.items.find((t) => t.id === agent.token.id)?.revokedAt)
    }))

  it.effect("another account's token is 404 exactly like a missing one", () =>
    Effect.gen(function*() {
      const a = yield* makeAgent(["tokens:manage"])
      const b = yield* makeAgent(["tokens:manage"])
      const foreign = yield* Effect.flip(a.client.tokens.revoke({ params: { id: b.token.id } }))
      const missing = yield* Effect.flip(a.client.tokens.revoke({ params: { id: "tok_0000000000000000000000000a" } }))
      assert.strictEqual(foreign._tag, "NotFound")
      assert.strictEqual(missing._tag, "NotFound")
      const rawForeign = yield* rawFetch(`/api/agent/tokens/${b.token.id}`, { method: "DELETE", headers: { authorization: `Bearer ${a.secret}` } })
      const rawMissing = yield* rawFetch("/api/agent/tokens/tok_0000000000000000000000000a", { method: "DELETE", headers: { authorization: `Bearer ${a.secret}` } })
      assert.deepStrictEqual(rawForeign.body, rawMissing.body)
      assert.strictEqual(rawForeign.status, 404)
      // b's token still works.
      assert.strictEqual((yield* b.client.auth.status()).token.id, b.token.id)
    }))

  it.effect("devices: register, re-register by push token, list, push-to-start token, remove", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["devices:read", "devices:write"])
      const first = yield* agent.app.devices.register({ payload: iosDevice(`tok-${agent.person.id}`) })
      assert.match(first.id, /^dev_/)
      assert.strictEqual(first.platform, "ios")
      assert.strictEqual(first.active, true)
      assert.strictEqual(first.liveActivitiesCapable, true)
      assert.strictEqual(first.interactiveLiveActivitiesCapable, true)
      assert.strictEqual(first.liveActivityTokenEnvironment, "production")
      assert.isNull(first.liveActivityTokenUpdatedAt)
      const again = yield* agent.app.devices.register({
        payload: { platform: "ios", deviceName: "renamed", pushToken: `tok-${agent.person.id}` }
      })
      assert.strictEqual(again.id, first.id)
      assert.strictEqual(again.deviceName, "renamed")
      const android = yield* agent.app.devices.register({ payload: { platform: "android", pushToken: `fcm-${agent.person.id}` } })
      assert.isNull(android.deviceName)
      const listed = yield* agent.client.devices.list()
      assert.deepStrictEqual(listed.items.map((d) => d.id), [android.id, first.id])
      const started = yield* agent.app.devices.pushToStartToken({ params: { id: first.id }, payload: { token: "pts-1" } })
      assert.isString(started.liveActivityTokenUpdatedAt)
      assert.deepStrictEqual(yield* agent.client.devices.remove({ params: { id: first.id } }), { ok: true })
      const gone = yield* Effect.flip(agent.client.devices.remove({ params: { id: first.id } }))
      assert.strictEqual(gone._tag, "NotFound")
      assert.deepStrictEqual((yield* agent.client.devices.list()).items.map((d) => d.id), [android.id])
    }))

  it.effect("another account's device is 404 on every device route", () =>
    Effect.gen(function*() {
      const a = yield* makeAgent(["devices:read", "devices:write"])
      const b = yield* makeAgent(["devices:read", "devices:write"])
      const device = yield* b.app.devices.register({ payload: { platform: "android", pushToken: `b-${b.person.id}` } })
      assert.strictEqual((yield* Effect.flip(a.client.devices.remove({ params: { id: device.id } })))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(a.app.devices.remove({ params: { id: device.id } })))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(a.app.devices.deliveries({ params: { id: device.id } })))._tag, "NotFound")
      assert.strictEqual(
        (yield* Effect.flip(a.app.devices.pushToStartToken({ params: { id: device.id }, payload: { token: "x" } })))._tag,
        "NotFound"
      )
      assert.deepStrictEqual((yield* a.client.devices.list()).items, [])
      assert.strictEqual((yield* b.client.devices.list()).items.length, 1)
    }))

  it.effect("a push token registered by another person retires the old device: the newcomer gets a device of their own", () =>
    Effect.gen(function*() {
      const a = yield* makeAgent(["devices:read", "notifications:send"])
      const b = yield* makeAgent(["devices:read"])
      const token = `shared-${a.person.id}`
      const device = yield* a.app.devices.register({ payload: { platform: "ios", pushToken: token } })
      yield* sentNotification(a.client.notifications.create({ payload: { title: "Deploy finished", body: "v2.3.1 is live" } }))
      assert.strictEqual((yield* a.app.devices.deliveries({ params: { id: device.id } })).items.length, 1)

      // The phone changes hands.
      const taken = yield* b.app.devices.register({ payload: { platform: "ios", pushToken: token } })
      assert.notStrictEqual(taken.id, device.id)
      assert.isTrue(taken.active)
      assert.deepStrictEqual((yield* b.app.devices.deliveries({ params: { id: taken.id } })).items, [])
      assert.strictEqual((yield* Effect.flip(b.app.devices.deliveries({ params: { id: device.id } })))._tag, "NotFound")
      assert.deepStrictEqual((yield* b.client.devices.list()).items.map((d) => d.id), [taken.id])
      // The old owner keeps the record and its history, inactive: that phone no longer gets their pushes.
      assert.deepStrictEqual((yield* a.client.devices.list()).items.map((d) => [d.id, d.active]), [[device.id, false]])
      assert.strictEqual((yield* a.app.devices.deliveries({ params: { id: device.id } })).items.length, 1)
      const sent = yield* sentNotification(a.client.notifications.create({ payload: { title: "Again", body: "b" } }))
      assert.strictEqual(sent.accepted, 0)
      assert.deepStrictEqual((yield* b.app.devices.deliveries({ params: { id: taken.id } })).items, [])

      // A token can never name a retired row: push tokens hold no whitespace.
      const forged = yield* rawFetch("/api/app/devices", {
        method: "POST",
        headers: { authorization: `Bearer ${b.session}`, "content-type": "application/json" },
        body: JSON.stringify({ platform: "ios", pushToken: `retired ${device.id}` })
      })
      assert.strictEqual(forged.status, 400)

      // Registered again by its new owner: the same device, updated.
      const again = yield* b.app.devices.register({ payload: { platform: "ios", pushToken: token, deviceName: "Bob's" } })
      assert.strictEqual(again.id, taken.id)
      assert.strictEqual(again.deviceName, "Bob's")
    }))

  it.effect("a phone that changes hands stops getting its earlier owner's live activities", () =>
    Effect.gen(function*() {
      const a = yield* makeAgent(["activities:read", "activities:write"])
      const b = yield* makeAgent(["devices:read"])
      const token = `la-shared-${a.person.id}`
      const device = yield* a.app.devices.register({ payload: { platform: "android", pushToken: token, liveActivitiesCapable: true } })
      const started = yield* a.client.activities.start({ payload: { props: { title: "Deploy" } } })
      assert.strictEqual(started.accepted, 1)
      yield* b.app.devices.register({ payload: { platform: "android", pushToken: token, liveActivitiesCapable: true } })
      const updated = yield* a.client.activities.update({
        params: { identifier: started.activity.id },
        payload: { props: { status: "halfway" }, priority: "high" }
      })
      // The device fails for that activity (its only one): nothing more is sent, its place is freed.
      assert.deepStrictEqual([updated.accepted, updated.queued, updated.failed], [0, 0, 1])
      assert.strictEqual(updated.activity.status, "failed")
      const sql = yield* SqlClient.SqlClient
      const ops = yield* sql<{ op: string; status: string }>`
        SELECT op, status FROM live_activity_operations WHERE activity_id = ${started.activity.id} AND device_id = ${device.id} ORDER BY seq`
      assert.deepStrictEqual(ops.map((o) => [o.op, o.status]), [["start", "accepted"], ["update", "failed"]])
      assert.strictEqual((yield* a.app.devices.deliveries({ params: { id: device.id } })).items.length, 1)
    }))

  it.effect("a session token is refused by the Agent API and an API token by the Person API", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      const asPerson = yield* rawFetch("/api/app/me", { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.strictEqual(asPerson.status, 401)
      const asAgent = yield* rawFetch("/api/agent/auth/status", { headers: { authorization: `Bearer ${agent.session}` } })
      assert.strictEqual(asAgent.status, 401)
    }))
})

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("oauth tokens", (it) => {
  it.effect("revoking an oauth token also revokes its refresh grant and shows kind and client", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["tokens:manage"])
      const sql = yield* SqlClient.SqlClient
      const clientId = `ocl_${agent.person.id.slice(4)}`
      const tokenId = `tok_${agent.person.id.slice(4)}`
      // A connected remote-tool client, as the OAuth flow of a later issue will write it.
      yield* sql`INSERT INTO oauth_clients (id, name) VALUES (${clientId}, 'Remote Tool')`
      yield* sql`INSERT INTO api_tokens (id, user_id, name, prefix, token_hash, scopes, kind, oauth_client_id)
                 VALUES (${tokenId}, ${agent.person.id}, 'Remote Tool', 'hld_remote00', ${`hash-${tokenId}`}, ARRAY['inbox:read'], 'oauth', ${clientId})`
      yield* sql`INSERT INTO oauth_refresh_grants (id, token_id, token_hash) VALUES (${`grt_${tokenId}`}, ${tokenId}, ${`refresh-${tokenId}`})`
      const listed = (yield* agent.client.tokens.list()).items.find((t) => t.id === tokenId)!
      assert.strictEqual(listed.kind, "oauth")
      assert.deepStrictEqual({ ...listed.oauthClient }, { clientId, name: "Remote Tool" })
      yield* agent.client.tokens.revoke({ params: { id: tokenId } })
      const [grant] = yield* sql<{ revokedAt: string | null }>`SELECT revoked_at FROM oauth_refresh_grants WHERE token_id = ${tokenId}`
      assert.isString(grant!.revokedAt)
      assert.isString((yield* agent.client.tokens.list()).items.find((t) => t.id === tokenId)!.revokedAt)
    }).pipe(Effect.orDie))
})
