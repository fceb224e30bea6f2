/**
 * The archive round trip: GET /mini-apps/{packageId}/archive answers the
 * published bytes exactly (non-ASCII text, JSON escapes, whitespace), with
 * their digest in headers; which review states each read shows.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { archiveFor, entryOf, fetchBytes, file, publishRaw } from "./support.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app archive", (it) => {
  it.effect("answers the exact published bytes (non-ASCII, escaped JSON) with their digest", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["apps:read", "apps:write"])
      const page = file("index.html", "<h1>Café ☕ – naïve</h1>")
      const entry = entryOf(page)
      // Written by hand: escapes (\u00e9, \/), raw non-ASCII, odd spacing and key order a re-serializer would change.
      const body =
        `{\n  "files" : [ {"contentBase64":"${page.bytes.toString("base64")}", "path":"index.html"} ],\n` +
        `  "manifest": {"schemaVersion":1,"appId":"caf\\u00e9-free","name":"Caf\\u00e9 ☕ \\"menu\\"","version":"1.0.0",` +
        `"publisher":{"id":"${agent.person.id}","name":"Zoë"},"format":"web","runtime":"web-1","entryPoint":"index.html",` +
        `"files":[{"path":"index.html","size":${entry.size},"sha256":"${entry.sha256}","mediaType":"text\\/html"}],` +
        `"capabilities":["local-storage"],"ageRating":4,"commerce":"none","privacyUrl":"https:\\/\\/example.test\\/priv\\u00e9"}\n}\n`
      // The app id cannot hold é: the escaped form is refused like the raw one.
      assert.strictEqual((yield* publishRaw(agent.secret, body)).status, 400)
      const accepted = body.replace("caf\\u00e9-free", "cafe-free")
      const bytes = Buffer.from(accepted, "utf8")
      const published = yield* publishRaw(agent.secret, bytes)
      assert.strictEqual(published.status, 201)
      const digest = createHash("sha256").update(bytes).digest()
      assert.strictEqual(published.body.archiveSha256, digest.toString("hex"))
      assert.strictEqual(published.body.archiveBytes, bytes.byteLength)
      assert.strictEqual(published.body.manifest.name, "Café ☕ \"menu\"")
      assert.strictEqual(published.body.manifest.privacyUrl, "https://example.test/privé")

      const answer = yield* fetchBytes(agent.secret, `/api/agent/mini-apps/${published.body.packageId}/archive`)
      assert.strictEqual(answer.status, 200)
      assert.isTrue(answer.bytes.equals(bytes))
      assert.strictEqual(answer.headers.get("content-type"), "application/json")
      assert.strictEqual(answer.headers.get("x-archive-sha256"), digest.toString("hex"))
      assert.strictEqual(answer.headers.get("repr-digest"), `sha-256=:${digest.toString("base64")}:`)
      // The typed client reads bytes too.
      const viaClient = yield* agent.client.miniApps.archive({ params: { packageId: published.body.packageId } })
      assert.isTrue(Buffer.from(viaClient).equals(bytes))
    }))

  it.effect("list shows installable packages; get any but removed; the archive only installable ones", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["apps:read", "apps:write"])
      const ids: Record<string, string> = {}
      for (const state of ["personal-only", "blocked", "disabled", "removed"]) {
        const published = yield* publishRaw(agent.secret, JSON.stringify(archiveFor(agent.person.id)))
        ids[state] = published.body.packageId
      }
      const sql = yield* SqlClient.SqlClient
      for (const state of ["blocked", "disabled", "removed"]) {
        yield* sql`UPDATE mini_app_packages SET review_state = ${state} WHERE id = ${ids[state]!}`
      }
      const listed = yield* agent.client.miniApps.list()
      assert.deepStrictEqual(listed.items.map((p) => p.packageId), [ids["personal-only"]])
      const auth = { headers: { authorization: `Bearer ${agent.secret}` } }
      const expected: ReadonlyArray<readonly [string, number, number]> = [
        ["personal-only", 200, 200],
        ["blocked", 200, 404],
        ["disabled", 200, 404],
        ["removed", 404, 404]
      ]
      for (const [state, get, archive] of expected) {
        const one = yield* rawFetch(`/api/agent/mini-apps/${ids[state]}`, auth)
        assert.strictEqual(one.status, get, `get ${state}`)
        if (get === 200) assert.strictEqual((one.body as { reviewState: string }).reviewState, state)
        assert.strictEqual((yield* fetchBytes(agent.secret, `/api/agent/mini-apps/${ids[state]}/archive`)).status, archive, `archive ${state}`)
      }
    }))
})
