/**
 * Webhook services over HTTP with the typed client: create (URL once), read
 * (never the URL), update, delete, rotate, share, scopes and concealment.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

const rw = ["services:read", "services:write"] as const

/** The path of a webhook URL, to post to the test server whatever its public base. */
const hookPath = (webhookUrl: string) => new URL(webhookUrl).pathname

const deliver = (path: string, body: unknown) =>
  rawFetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("webhook services", (it) => {
  it.effect("create returns the service and its webhook URL once; reads never show it", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const created = yield* agent.client.services.create({
        payload: { title: "CI", imageUrl: "https://ci.example.test/logo.png", url: "https://ci.example.test" }
      })
      assert.match(created.service.id, /^svc_/)
      assert.strictEqual(created.service.title, "CI")
      assert.strictEqual(created.service.imageUrl, "https://ci.example.test/logo.png")
      assert.strictEqual(created.service.url, "https://ci.example.test")
      assert.isNull(created.service.familyId)
      assert.isNull(created.service.defaultReplyWebhookId)
      assert.match(created.webhookUrl, /\/hooks\/hlw_[0-9A-Za-z]{49}$/)
      assert.strictEqual(created.service.webhookUrl, created.webhookUrl)

      const listed = yield* rawFetch("/api/agent/services", { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.notInclude(JSON.stringify(listed.body), "hlw_")
      assert.deepStrictEqual((listed.body as { items: Array<{ id: string }> }).items.map((s) => s.id), [created.service.id])
      const one = yield* rawFetch(`/api/agent/services/${created.service.id}`, { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.strictEqual(one.status, 200)
      assert.notProperty(one.body as object, "webhookUrl")
    }))

  it.effect("update changes title, avatar and tap URL; null clears; delete makes the URL stop working", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const { service, webhookUrl } = yield* agent.client.services.create({ payload: { title: "Old", url: "https://a.example.test" } })
      const updated = yield* agent.client.services.update({
        params: { id: service.id },
        payload: { title: "New", imageUrl: "https://a.example.test/i.png", url: null }
      })
      assert.strictEqual(updated.title, "New")
      assert.strictEqual(updated.imageUrl, "https://a.example.test/i.png")
      assert.isNull(updated.url)
      assert.isAtLeast(Date.parse(updated.updatedAt), Date.parse(service.updatedAt))
      const unchanged = yield* agent.client.services.update({ params: { id: service.id }, payload: {} })
      assert.strictEqual(unchanged.title, "New")

      yield* agent.client.services.remove({ params: { id: service.id } })
      assert.strictEqual((yield* Effect.flip(agent.client.services.get({ params: { id: service.id } })))._tag, "NotFound")
      assert.strictEqual((yield* deliver(hookPath(webhookUrl), { body: "hello" })).status, 404)
    }))

  it.effect("rotate returns a new URL once; the old one answers 404 at once", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const { service, webhookUrl } = yield* agent.client.services.create({ payload: { title: "Rotating" } })
      assert.strictEqual((yield* deliver(hookPath(webhookUrl), { body: "before" })).status, 202)
      const rotated = yield* agent.client.services.rotate({ params: { id: service.id } })
      assert.notStrictEqual(rotated.webhookUrl, webhookUrl)
      assert.strictEqual(rotated.service.id, service.id)
      assert.strictEqual((yield* deliver(hookPath(webhookUrl), { body: "old" })).status, 404)
      assert.strictEqual((yield* deliver(hookPath(rotated.webhookUrl), { body: "new" })).status, 202)
    }))

  it.effect("share: a family the caller is not in answers 404; null unshares", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const { service } = yield* agent.client.services.create({ payload: { title: "Shared?" } })
      const error = yield* Effect.flip(agent.client.services.share({ params: { id: service.id }, payload: { familyId: "team_0000000000000000000000000z" } }))
      assert.strictEqual(error._tag, "NotFound")
      const unshared = yield* agent.client.services.share({ params: { id: service.id }, payload: { familyId: null } })
      assert.isNull(unshared.familyId)
      const bad = yield* rawFetch(`/api/agent/services/${service.id}/share`, {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
        body: JSON.stringify({})
      })
      assert.strictEqual(bad.status, 400)
    }))

  it.effect("an account keeps at most 1,000 services, so the list always holds them all", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO services (id, user_id, title, token_hash)
        SELECT 'svc_bulk' || lpad(n::text, 4, '0'), ${agent.person.id}, 'bulk', 'hash-' || ${agent.person.id} || '-' || n
        FROM generate_series(1, 995) AS n`
      // Five places left and ten creates at once: five succeed.
      const together = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, n) => n),
        (n) => Effect.result(agent.client.services.create({ payload: { title: `together ${n}` } })),
        { concurrency: "unbounded" }
      )
      const made = together.flatMap((r) => r._tag === "Success" ? [r.success] : [])
      assert.strictEqual(made.length, 5)
      const last = made[0]!
      const refused = yield* Effect.flip(agent.client.services.create({ payload: { title: "one too many" } }))
      assert.strictEqual(refused._tag, "LimitReached")
      assert.strictEqual((refused as { limit?: number }).limit, 1000)
      const listed = yield* agent.client.services.list()
      assert.strictEqual(listed.items.length, 1000)
      assert.isTrue(listed.items.some((s) => s.id === last.service.id))
    }))

  it.effect("another account's service answers 404 to every operation", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const { service } = yield* owner.client.services.create({ payload: { title: "Mine" } })
      const other = yield* makeAgent([...rw])
      const id = { params: { id: service.id } }
      const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
          other.client.services.get(id),
          other.client.services.update({ ...id, payload: { title: "Stolen" } }),
          other.client.services.remove(id),
          other.client.services.rotate(id),
          other.client.services.share({ ...id, payload: { familyId: null } })
        ]
      for (const attempt of attempts) {
        assert.strictEqual((yield* Effect.flip(attempt))._tag, "NotFound")
      }
      assert.deepStrictEqual((yield* other.client.services.list()).items, [])
      assert.strictEqual((yield* owner.client.services.get(id)).title, "Mine")
    }))

  it.effect("scopes: reads need services:read, changes services:write", () =>
    Effect.gen(function*() {
      const reader = yield* makeAgent(["services:read"])
      const error = yield* Effect.flip(reader.client.services.create({ payload: { title: "x" } }))
      assert.strictEqual(error._tag, "MissingScope")
      assert.deepStrictEqual(error._tag === "MissingScope" ? error.required : [], ["services:write"])
      const writer = yield* makeAgent(["services:write"])
      const listing = yield* Effect.flip(writer.client.services.list())
      assert.deepStrictEqual(listing._tag === "MissingScope" ? listing.required : [], ["services:read"])
    }))

  it.effect("bad input: empty title, bad URLs, unknown fields, an unknown reply webhook, a malformed id", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const post = (body: unknown) =>
        rawFetch("/api/agent/services", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      for (
        const body of [
          {},
          { title: "" },
          { title: "x".repeat(101) },
          { title: "t", url: "not a url" },
          { title: "t", imageUrl: 3 },
          { title: "t", webhookUrl: "https://x.test" },
          { title: "t", defaultReplyWebhookId: "nope" }
        ]
      ) {
        const response = yield* post(body)
        assert.strictEqual(response.status, 400, JSON.stringify(body))
        assert.strictEqual((response.body as { code: string }).code, "VALIDATION_FAILED")
      }
      const unknownHook = yield* post({ title: "t", defaultReplyWebhookId: "whk_0000000000000000000000000z" })
      assert.strictEqual(unknownHook.status, 404)
      assert.strictEqual((unknownHook.body as { code: string }).code, "NOT_FOUND")
      const malformed = yield* rawFetch("/api/agent/services/evt_123", { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.strictEqual(malformed.status, 400)
    }))
})
