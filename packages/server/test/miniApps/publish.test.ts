/**
 * Publishing over HTTP: 201 then 200 for the same bytes, the archive's
 * consistency rules (digest, size, missing and extra files, entry point),
 * the publisher, the body limit, and concealment of another account's package.
 */
import { assert, layer } from "@effect/vitest"
import { MiniAppArchive } from "@herald/api"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { archiveFor, fetchBytes, file, issuePaths, manifestFor, publishRaw } from "./support.ts"

const rw = ["apps:read", "apps:write"] as const

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app publish", (it) => {
  it.effect("publishes a new package (201), the same bytes again answer it (200), other bytes a new one", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const body = JSON.stringify(archiveFor(agent.person.id))
      const first = yield* publishRaw(agent.secret, body)
      assert.strictEqual(first.status, 201)
      assert.match(first.body.packageId, /^pkg_/)
      assert.strictEqual(first.body.reviewState, "personal-only")
      assert.strictEqual(first.body.archiveBytes, Buffer.byteLength(body))
      assert.match(first.body.installUrl, new RegExp(`/mini-apps/${first.body.packageId}/install$`))
      const again = yield* publishRaw(agent.secret, body)
      assert.strictEqual(again.status, 200)
      assert.deepStrictEqual(again.body, first.body)
      // Other bytes (a space more) are another package.
      const spaced = yield* publishRaw(agent.secret, body + " ")
      assert.strictEqual(spaced.status, 201)
      assert.notStrictEqual(spaced.body.packageId, first.body.packageId)
      const list = yield* agent.client.miniApps.list()
      assert.deepStrictEqual(list.items.map((p) => p.packageId), [spaced.body.packageId, first.body.packageId])
      const one = yield* agent.client.miniApps.get({ params: { packageId: first.body.packageId } })
      assert.strictEqual(one.archiveSha256, first.body.archiveSha256)
    }))

  it.effect("the typed client publishes an archive object", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const archive = archiveFor(agent.person.id)
      const pkg = yield* agent.client.miniApps.publish({ payload: Schema.decodeUnknownSync(MiniAppArchive)(archive) })
      assert.strictEqual(pkg.manifest.appId, "demo-app")
      assert.strictEqual(pkg.reviewState, "personal-only")
    }))

  it.effect("each file must match the manifest: digest, size, present once, none extra, entry point listed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const a = file("index.html", "<p>a</p>")
      const b = file("app.js", "console.log(1)", "text/javascript")
      const base = () => archiveFor(agent.person.id, [a, b])
      const cases: ReadonlyArray<readonly [string, (x: ReturnType<typeof base>) => void, ReadonlyArray<string>]> = [
        ["digest mismatch", (x) => { x.manifest.files[1].sha256 = "0".repeat(64) }, ["body.manifest.files[1].sha256"]],
        ["size mismatch", (x) => { x.manifest.files[0].size += 1 }, ["body.manifest.files[0].size"]],
        ["missing file", (x) => { x.files.pop() }, ["body.manifest.files[1].path"]],
        ["extra file", (x) => { x.files.push({ path: "extra.txt", contentBase64: "aGk=" }) }, ["body.files[2].path"]],
        ["file twice", (x) => { x.files.push(x.files[0]!) }, ["body.files[2].path"]],
        ["manifest lists a path twice", (x) => { x.manifest.files[1] = { ...x.manifest.files[0] } ; x.files.pop() }, ["body.manifest.files[1].path"]],
        ["entry point not a file", (x) => { x.manifest.entryPoint = "other.html" }, ["body.manifest.entryPoint"]],
        ["content not base64", (x) => { x.files[0] = { path: "index.html", contentBase64: "@@@" } }, ["body.files[0].contentBase64"]],
        ["extra field in a file", (x) => { (x.files[0] as any).mode = 420 }, ["body.files[0].mode"]],
        ["extra field at the top", (x) => { (x as any).signature = "x" }, ["body.signature"]]
      ]
      for (const [name, change, paths] of cases) {
        const x = base()
        change(x)
        const answer = yield* publishRaw(agent.secret, JSON.stringify(x))
        assert.strictEqual(answer.status, 400, name)
        assert.strictEqual(answer.body.code, "VALIDATION_FAILED", name)
        assert.deepStrictEqual(issuePaths(answer.body), [...paths], name)
      }
      const ok = yield* publishRaw(agent.secret, JSON.stringify(base()))
      assert.strictEqual(ok.status, 201)
    }))

  it.effect("the publisher must be the caller (403 FORBIDDEN); apps:write is needed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const other = yield* makeAgent([...rw])
      const answer = yield* publishRaw(agent.secret, JSON.stringify(archiveFor(other.person.id)))
      assert.strictEqual(answer.status, 403)
      assert.strictEqual(answer.body.code, "FORBIDDEN")
      const reader = yield* makeAgent(["apps:read"])
      const refused = yield* publishRaw(reader.secret, JSON.stringify(archiveFor(reader.person.id)))
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body.code, "MISSING_SCOPE")
    }))

  it.effect("a body over 12 MiB answers 413; decoded files over 8 MiB together answer 400", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const big = yield* publishRaw(agent.secret, Buffer.alloc(12 * 1024 * 1024 + 1, 0x20))
      assert.strictEqual(big.status, 413)
      assert.strictEqual(big.body.code, "PAYLOAD_TOO_LARGE")
      // Three files of 3 MiB: each within the per-file limit, 9 MiB together (body about 12 MiB of base64: under it).
      const files = [0, 1, 2].map((i) => file(`f${i}.bin`, Buffer.alloc(3 * 1024 * 1024 - 200_000, i), "application/octet-stream"))
      const x = archiveFor(agent.person.id, files)
      const body = JSON.stringify(x)
      assert.isBelow(Buffer.byteLength(body), 12 * 1024 * 1024)
      const answer = yield* publishRaw(agent.secret, body)
      // 3 × (3 MiB − 200,000) = 8.86 MB > 8 MiB.
      assert.strictEqual(answer.status, 400)
      assert.deepStrictEqual(issuePaths(answer.body), ["body.files"])
    }))

  it.effect("a person keeps at most 200 packages (422 LIMIT_REACHED); the same bytes still answer the existing one", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const firstBody = JSON.stringify(archiveFor(agent.person.id))
      const first = yield* publishRaw(agent.secret, firstBody)
      const sql = yield* SqlClient.SqlClient
      // 199 more rows like the first (the limit counts rows; their bytes need not differ for this).
      yield* sql`
        INSERT INTO mini_app_packages (id, user_id, app_id, version, manifest, archive, archive_bytes, archive_sha256, signature, key_id)
        SELECT 'pkg_fill' || g, user_id, app_id, version, manifest, archive, archive_bytes, md5(g::text) || md5(g::text), signature, key_id
        FROM mini_app_packages, generate_series(1, 199) AS g WHERE id = ${first.body.packageId}`
      const over = yield* publishRaw(agent.secret, JSON.stringify(archiveFor(agent.person.id)))
      assert.strictEqual(over.status, 422)
      assert.strictEqual(over.body.code, "LIMIT_REACHED")
      assert.strictEqual(over.body.limit, 200)
      assert.strictEqual((yield* publishRaw(agent.secret, firstBody)).status, 200)
    }))

  it.effect("another account's package is concealed (404) from get and archive, and not listed", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const other = yield* makeAgent([...rw])
      const published = yield* publishRaw(owner.secret, JSON.stringify(archiveFor(owner.person.id)))
      const id = published.body.packageId as string
      const auth = { headers: { authorization: `Bearer ${other.secret}` } }
      assert.strictEqual((yield* rawFetch(`/api/agent/mini-apps/${id}`, auth)).status, 404)
      assert.strictEqual((yield* fetchBytes(other.secret, `/api/agent/mini-apps/${id}/archive`)).status, 404)
      assert.deepStrictEqual((yield* other.client.miniApps.list()).items, [])
      // The same bytes under the other account are refused for the publisher, never answered with the owner's package.
      const same = yield* publishRaw(other.secret, JSON.stringify({ ...archiveFor(owner.person.id), manifest: manifestFor(owner.person.id, [file("index.html", "x")]) }))
      assert.strictEqual(same.status, 400)
      assert.strictEqual((yield* rawFetch(`/api/agent/mini-apps/pkg_unknown`, auth)).status, 404)
    }))
})
