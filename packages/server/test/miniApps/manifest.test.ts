/**
 * Every manifest rule of the spec's table at its boundary: accepted at the
 * limit (201; for `publisher.id`, which must also be the caller, 403 proves
 * validation passed), refused one past it with a 400 `VALIDATION_FAILED`
 * issue naming the field. One table, walked by one test.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"
import { entryOf, file, issuePaths, manifestFor, publishRaw } from "./support.ts"
import type { ArchiveFile } from "./support.ts"

type Archive = { manifest: Record<string, any>; files: Array<Record<string, any>> }
/** What a case expects: accepted (201), forbidden (403: valid, but not the caller's publisher id) or an issue path. */
type Expect = "ok" | "forbidden" | string

const html = (path: string) => file(path, `<p>${path}</p>`)

/** An archive of these files for `publisherId` (the first is the entry point). */
const build = (publisherId: string, files: ReadonlyArray<ArchiveFile>): Archive => ({
  manifest: manifestFor(publisherId, files),
  files: files.map((f) => ({ path: f.path, contentBase64: f.bytes.toString("base64") }))
})

/** A case that only changes the manifest of a one-file archive. */
const m = (change: (manifest: Record<string, any>) => void) => (publisherId: string) => {
  const archive = build(publisherId, [html("index.html")])
  change(archive.manifest)
  return archive
}

/** A case whose one file (and entry point) has this path. */
const atPath = (path: string) => (publisherId: string) => build(publisherId, [html(path)])

const many = (n: number) => (publisherId: string) =>
  build(publisherId, Array.from({ length: n }, (_, i) => html(`f${i}.html`)))

const sized = (size: number) => (publisherId: string) => {
  const big = file("index.bin", Buffer.alloc(size, 7), "application/octet-stream")
  return build(publisherId, [big])
}

const url = (length: number) => "https://example.test/" + "a".repeat(length - "https://example.test/".length)
const emoji = (n: number) => "😀".repeat(n)

const cases: ReadonlyArray<readonly [string, (publisherId: string) => Archive, Expect]> = [
  ["schemaVersion 1", m(() => {}), "ok"],
  ["schemaVersion 2", m((x) => { x.schemaVersion = 2 }), "body.manifest.schemaVersion"],
  ["schemaVersion as text", m((x) => { x.schemaVersion = "1" }), "body.manifest.schemaVersion"],
  ["appId 64", m((x) => { x.appId = "a".repeat(64) }), "ok"],
  ["appId 65", m((x) => { x.appId = "a".repeat(65) }), "body.manifest.appId"],
  ["appId groups", m((x) => { x.appId = "my-app-2" }), "ok"],
  ["appId uppercase", m((x) => { x.appId = "My-app" }), "body.manifest.appId"],
  ["appId empty group", m((x) => { x.appId = "my--app" }), "body.manifest.appId"],
  ["appId leading hyphen", m((x) => { x.appId = "-app" }), "body.manifest.appId"],
  ["appId empty", m((x) => { x.appId = "" }), "body.manifest.appId"],
  ["name 100 code points", m((x) => { x.name = emoji(100) }), "ok"],
  ["name 101 code points", m((x) => { x.name = emoji(101) }), "body.manifest.name"],
  ["name empty", m((x) => { x.name = "" }), "body.manifest.name"],
  ["version 64", m((x) => { x.version = "1.0.0-" + "a".repeat(58) }), "ok"],
  ["version 65", m((x) => { x.version = "1.0.0-" + "a".repeat(59) }), "body.manifest.version"],
  ["version pre-release and build", m((x) => { x.version = "1.2.3-beta.1+build.5" }), "ok"],
  ["version two parts", m((x) => { x.version = "1.2" }), "body.manifest.version"],
  ["version leading zero", m((x) => { x.version = "01.2.3" }), "body.manifest.version"],
  ["publisher id 128", m((x) => { x.publisher.id = "p".repeat(128) }), "forbidden"],
  ["publisher id 129", m((x) => { x.publisher.id = "p".repeat(129) }), "body.manifest.publisher.id"],
  ["publisher id empty", m((x) => { x.publisher.id = "" }), "body.manifest.publisher.id"],
  ["publisher name 100", m((x) => { x.publisher.name = emoji(100) }), "ok"],
  ["publisher name 101", m((x) => { x.publisher.name = emoji(101) }), "body.manifest.publisher.name"],
  ["publisher name empty", m((x) => { x.publisher.name = "" }), "body.manifest.publisher.name"],
  ["publisher extra field", m((x) => { x.publisher.url = "https://example.test" }), "body.manifest.publisher.url"],
  ["format react-native", m((x) => { x.format = "react-native" }), "ok"],
  ["format other", m((x) => { x.format = "native" }), "body.manifest.format"],
  ["runtime 64", m((x) => { x.runtime = "r".repeat(64) }), "ok"],
  ["runtime 65", m((x) => { x.runtime = "r".repeat(65) }), "body.manifest.runtime"],
  ["runtime empty", m((x) => { x.runtime = "" }), "body.manifest.runtime"],
  ["entryPoint 240", atPath("a".repeat(235) + ".html"), "ok"],
  ["entryPoint 241", atPath("a".repeat(236) + ".html"), "body.manifest.entryPoint"],
  ["entryPoint nested", atPath("app/v1/index.min.html"), "ok"],
  ["entryPoint ..", m((x) => { x.entryPoint = "../index.html" }), "body.manifest.entryPoint"],
  ["entryPoint leading slash", m((x) => { x.entryPoint = "/index.html" }), "body.manifest.entryPoint"],
  ["entryPoint empty segment", m((x) => { x.entryPoint = "app//index.html" }), "body.manifest.entryPoint"],
  ["entryPoint empty dot part", m((x) => { x.entryPoint = "index..html" }), "body.manifest.entryPoint"],
  ["file path ..", m((x) => { x.files[0].path = "a/../b.html" }), "body.manifest.files[0].path"],
  ["files 1", many(1), "ok"],
  ["files 0", m((x) => { x.files = [] }), "body.manifest.files"],
  ["files 256", many(256), "ok"],
  ["files 257", many(257), "body.manifest.files"],
  ["size 4194304", sized(4_194_304), "ok"],
  ["size 4194305", sized(4_194_305), "body.manifest.files[0].size"],
  ["size negative", m((x) => { x.files[0].size = -1 }), "body.manifest.files[0].size"],
  ["size fractional", m((x) => { x.files[0].size = 1.5 }), "body.manifest.files[0].size"],
  ["sha256 uppercase", m((x) => { x.files[0].sha256 = x.files[0].sha256.toUpperCase() }), "body.manifest.files[0].sha256"],
  ["sha256 63 chars", m((x) => { x.files[0].sha256 = x.files[0].sha256.slice(1) }), "body.manifest.files[0].sha256"],
  ["mediaType 100", m((x) => { x.files[0].mediaType = "text/" + "x".repeat(95) }), "ok"],
  ["mediaType 101", m((x) => { x.files[0].mediaType = "text/" + "x".repeat(96) }), "body.manifest.files[0].mediaType"],
  ["mediaType with +", m((x) => { x.files[0].mediaType = "image/svg+xml" }), "ok"],
  ["mediaType uppercase", m((x) => { x.files[0].mediaType = "Text/HTML" }), "body.manifest.files[0].mediaType"],
  ["mediaType without subtype", m((x) => { x.files[0].mediaType = "text" }), "body.manifest.files[0].mediaType"],
  ["file extra field", m((x) => { x.files[0].mode = 420 }), "body.manifest.files[0].mode"],
  ["capabilities 1", m((x) => { x.capabilities = ["local-storage"] }), "ok"],
  ["capabilities 2", m((x) => { x.capabilities = ["local-storage", "local-storage"] }), "body.manifest.capabilities"],
  ["capabilities other value", m((x) => { x.capabilities = ["camera"] }), "body.manifest.capabilities[0]"],
  ...[4, 9, 13, 16, 18].map((age) => [`ageRating ${age}`, m((x) => { x.ageRating = age }), "ok"] as const),
  ["ageRating 12", m((x) => { x.ageRating = 12 }), "body.manifest.ageRating"],
  ["ageRating as text", m((x) => { x.ageRating = "4" }), "body.manifest.ageRating"],
  ["commerce other", m((x) => { x.commerce = "paid" }), "body.manifest.commerce"],
  ["aliases 8", m((x) => { x.aliases = Array.from({ length: 8 }, (_, i) => `alias ${i}`) }), "ok"],
  ["aliases 9", m((x) => { x.aliases = Array.from({ length: 9 }, (_, i) => `alias ${i}`) }), "body.manifest.aliases"],
  ["alias 100", m((x) => { x.aliases = [emoji(100)] }), "ok"],
  ["alias 101", m((x) => { x.aliases = [emoji(101)] }), "body.manifest.aliases[0]"],
  ["alias empty", m((x) => { x.aliases = [""] }), "body.manifest.aliases[0]"],
  ["privacyUrl 2048", m((x) => { x.privacyUrl = url(2048) }), "ok"],
  ["privacyUrl 2049", m((x) => { x.privacyUrl = url(2049) }), "body.manifest.privacyUrl"],
  ["privacyUrl not a URI", m((x) => { x.privacyUrl = "not a uri" }), "body.manifest.privacyUrl"],
  ["supportUrl 2048", m((x) => { x.supportUrl = url(2048) }), "ok"],
  ["supportUrl 2049", m((x) => { x.supportUrl = url(2049) }), "body.manifest.supportUrl"],
  ["manifest extra field", m((x) => { x.homepage = "https://example.test" }), "body.manifest.homepage"],
  ["manifest field missing", m((x) => { delete x.runtime }), "body.manifest.runtime"]
]

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("mini-app manifest rules", (it) => {
  it.effect("each rule at its boundary: accepted at the limit, refused one past it, naming the field", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["apps:read", "apps:write"])
      for (const [name, make, expected] of cases) {
        const answer = yield* publishRaw(agent.secret, JSON.stringify(make(agent.person.id)))
        if (expected === "ok") {
          assert.strictEqual(answer.status, 201, `${name}: ${JSON.stringify(answer.body).slice(0, 300)}`)
        } else if (expected === "forbidden") {
          assert.strictEqual(answer.status, 403, name)
          assert.strictEqual(answer.body.code, "FORBIDDEN", name)
        } else {
          assert.strictEqual(answer.status, 400, `${name}: ${answer.status}`)
          assert.strictEqual(answer.body.code, "VALIDATION_FAILED", name)
          assert.include(issuePaths(answer.body), expected, `${name}: ${JSON.stringify(answer.body.issues).slice(0, 300)}`)
        }
      }
    }))

  it.effect("the manifest's files are checked against the archive's entries", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["apps:write"])
      const a = html("index.html")
      const archive = build(agent.person.id, [a])
      archive.manifest.files.push(entryOf(html("missing.html")))
      const answer = yield* publishRaw(agent.secret, JSON.stringify(archive))
      assert.strictEqual(answer.status, 400)
      assert.deepStrictEqual(issuePaths(answer.body), ["body.manifest.files[1].path"])
    }))
})
