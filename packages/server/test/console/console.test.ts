/**
 * The person's console as `herald serve` serves it (issue 32, item 3): every
 * console path answers the shell page under the strict
 * Content-Security-Policy, the scripts and the service worker with their
 * types and headers, unknown API paths still their JSON 404. And the
 * console cannot drift from what it talks to: every Person API call of
 * `api.js` and `sw.js` is an endpoint of AppApi, the router's pages are the
 * server's, the token scopes are the contract's, every module import
 * resolves to a served file, and all of its JavaScript stays within 100 KB
 * gzipped.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Scopes } from "@herald/api"
import { AppApi } from "@herald/api"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { gzipSync } from "node:zlib"
import { rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { consoleDir, loadConsoleFiles } from "../../src/console/ConsoleFiles.ts"
import { consoleContentSecurityPolicy, consolePages, loopbackRedirect } from "../../src/console/ConsoleRoutes.ts"
import { routesOf } from "../../src/http/Routes.ts"

const publicDir = path.join(consoleDir(), "public")
const read = (relative: string) => fs.readFileSync(path.join(publicDir, relative), "utf8")

/** Every file under public/, relative. */
const walk = (dir: string, prefix = ""): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]
  )

const jsFiles = walk(publicDir).filter((f) => f.endsWith(".js"))

const directives = (csp: string) =>
  new Map(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]))

/** A route pattern with its parameter names erased, so `/inbox/:id` and `/inbox/:itemId` compare equal. */
const shape = (method: string, pattern: string) => `${method} ${pattern.replace(/:[A-Za-z_]\w*/g, ":")}`

/** Every AppApi endpoint, as method and path. */
const appApiRoutes = new Set(routesOf(AppApi).map((r) => shape(r.method, r.path)))

/** The modules a JS file imports (static `from "…"` and dynamic `import("…")`), resolved to served paths. */
const importsOf = (servedPath: string, source: string) =>
  Array.from(source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)"([^"]+)"/g), (m) => new URL(m[1]!, `http://x${servedPath}`).pathname)

const servedPathOf = (relative: string) => relative === "sw.js" ? "/sw.js" : `/console/${relative}`

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("the console", (it) => {
  const samplePages = [
    "/",
    "/sign-in",
    "/sign-in?error=link",
    "/inbox",
    "/inbox/notification:anot_123",
    "/prompts/int_123",
    "/activities",
    "/devices",
    "/tokens",
    "/teams",
    "/teams/team_123",
    "/join/x",
    "/oncall",
    "/apps",
    "/mini-apps/x/install",
    "/settings",
    "/inbox/"
  ]

  it.effect("every console path: the shell, HTML under the strict policy, never cached or framed", () =>
    Effect.gen(function*() {
      const shell = read("index.html")
      for (const page of samplePages) {
        const response = yield* rawFetch(page)
        assert.strictEqual(response.status, 200, page)
        assert.strictEqual(response.headers.get("content-type"), "text/html; charset=utf-8", page)
        assert.strictEqual(response.headers.get("content-security-policy"), consoleContentSecurityPolicy, page)
        assert.strictEqual(response.headers.get("cache-control"), "no-cache", page)
        assert.strictEqual(response.headers.get("x-frame-options"), "DENY", page)
        assert.strictEqual(response.headers.get("x-content-type-options"), "nosniff", page)
        assert.strictEqual(response.body, shell, page)
      }
      const csp = directives(consoleContentSecurityPolicy)
      assert.deepStrictEqual(csp.get("default-src"), ["'self'"])
      assert.deepStrictEqual(csp.get("script-src"), ["'self'"])
      assert.deepStrictEqual(csp.get("style-src"), ["'self'"])
      assert.deepStrictEqual(csp.get("connect-src"), ["'self'"])
      assert.deepStrictEqual(csp.get("frame-ancestors"), ["'none'"])
      assert.deepStrictEqual(csp.get("base-uri"), ["'none'"])
      // No other origin and nothing inline anywhere in the policy.
      assert.notMatch(consoleContentSecurityPolicy, /https?:|\*|unsafe|nonce|sha256/)
      // What the policy forbids, the shell does not try: no inline script or style; the module script is from here.
      assert.notMatch(shell, /<script(?![^>]*\ssrc="\/console\/)[^>]*>/)
      assert.notMatch(shell, /<style|\sstyle=|\son[a-z]+=/i)
      assert.match(shell, /<noscript>[^<]*<p[^>]*>This page needs JavaScript/)
    }))

  it.effect("the router's pages are the server's console paths", () =>
    Effect.gen(function*() {
      const router = read("app/router.js")
      const patterns = Array.from(router.matchAll(/pattern: "([^"]+)"/g), (m) => m[1]!)
      assert.deepStrictEqual([...patterns].sort(), consolePages.filter((p) => p !== "/").sort())
    }))

  it.effect("anything else is not the console: unknown API, OAuth, hooks and well-known paths keep their JSON 404", () =>
    Effect.gen(function*() {
      for (const page of ["/api/app/nope", "/api/agent/nope", "/oauth/nope", "/hooks/openapi.json/x", "/.well-known/nope", "/nope", "/inbox/a/b", "/console/nope.js", "/console/app/nope.js"]) {
        const response = yield* rawFetch(page)
        assert.strictEqual(response.status, 404, page)
        assert.include(response.headers.get("content-type") ?? "", "application/json", page)
        assert.strictEqual((response.body as { code: string }).code, "NOT_FOUND", page)
      }
    }))

  it.effect("scripts as JavaScript, the worker with its scope, the manifest and its icons", () =>
    Effect.gen(function*() {
      for (const file of jsFiles) {
        const served = servedPathOf(file)
        const response = yield* rawFetch(served)
        assert.strictEqual(response.status, 200, served)
        assert.strictEqual(response.headers.get("content-type"), "text/javascript; charset=utf-8", served)
        assert.strictEqual(response.body, read(file), served)
      }
      const worker = yield* rawFetch("/sw.js")
      assert.strictEqual(worker.headers.get("service-worker-allowed"), "/")
      assert.strictEqual(worker.headers.get("content-security-policy"), consoleContentSecurityPolicy)
      assert.strictEqual(worker.headers.get("cache-control"), "no-cache")

      const css = yield* rawFetch("/console/console.css")
      assert.strictEqual(css.headers.get("content-type"), "text/css; charset=utf-8")

      const manifest = yield* rawFetch("/manifest.webmanifest")
      assert.strictEqual(manifest.status, 200)
      assert.strictEqual(manifest.headers.get("content-type"), "application/manifest+json")
      const { icons, start_url, display } = manifest.body as { icons: Array<{ src: string; sizes: string; type: string; purpose: string }>; start_url: string; display: string }
      assert.strictEqual(start_url, "/inbox")
      assert.strictEqual(display, "standalone")
      assert.deepStrictEqual(icons.filter((i) => i.type === "image/png").map((i) => `${i.sizes} ${i.purpose}`), ["192x192 any", "512x512 any", "512x512 maskable"])
      for (const icon of icons) {
        const served = yield* rawFetch(icon.src)
        assert.strictEqual(served.status, 200, icon.src)
        assert.strictEqual(served.headers.get("content-type"), icon.type, icon.src)
        if (icon.type === "image/png") {
          const [width] = icon.sizes.split("x")
          const bytes = fs.readFileSync(path.join(publicDir, icon.src.slice("/console/".length)))
          assert.strictEqual(bytes.readUInt32BE(16), Number(width), icon.src)
        }
      }
    }))

  it.effect("cached well: gzip for those who take it, 304 for a current copy, vendor files for good", () =>
    Effect.gen(function*() {
      const first = yield* rawFetch("/console/app/main.js", { headers: { "accept-encoding": "gzip" } })
      assert.strictEqual(first.headers.get("content-encoding"), "gzip")
      assert.strictEqual(first.headers.get("vary"), "accept-encoding")
      const etag = first.headers.get("etag")!
      assert.match(etag, /^"[\w-]+"$/)
      const again = yield* rawFetch("/console/app/main.js", { headers: { "if-none-match": etag } })
      assert.strictEqual(again.status, 304)
      const plain = yield* rawFetch("/console/app/main.js", { headers: { "accept-encoding": "identity" } })
      assert.strictEqual(plain.headers.get("content-encoding"), null)
      assert.strictEqual(plain.body, read("app/main.js"))

      const { vendor } = loadConsoleFiles()
      for (const served of Object.values(vendor)) {
        const response = yield* rawFetch(served)
        assert.strictEqual(response.status, 200, served)
        assert.strictEqual(response.headers.get("cache-control"), "public, max-age=31536000, immutable", served)
        assert.strictEqual(response.headers.get("content-type"), "text/javascript; charset=utf-8", served)
        // No bare specifier is left for the browser (it could not resolve one without an import map).
        for (const imported of importsOf(served, response.body as string)) assert.isTrue(imported.startsWith("/console/vendor/"), imported)
      }
    }))

  it.effect("every module import of the console resolves to a served script", () =>
    Effect.gen(function*() {
      const seen = new Set<string>()
      for (const file of jsFiles) {
        for (const imported of importsOf(servedPathOf(file), read(file))) {
          if (seen.has(imported)) continue
          seen.add(imported)
          const response = yield* rawFetch(imported)
          assert.strictEqual(response.status, 200, `${file} imports ${imported}`)
          assert.strictEqual(response.headers.get("content-type"), "text/javascript; charset=utf-8", imported)
        }
      }
      assert.isTrue(seen.has(loadConsoleFiles().vendor["preact"]!))
    }))

  it.effect("all of the console's JavaScript is at most 100 KB gzipped", () =>
    Effect.sync(() => {
      const { files } = loadConsoleFiles()
      const scripts = [...files].filter(([, file]) => file.contentType.startsWith("text/javascript"))
      const total = scripts.reduce((sum, [, file]) => sum + gzipSync(file.body, { level: 9 }).byteLength, 0)
      console.info(`console JavaScript: ${scripts.length} files, ${(total / 1024).toFixed(1)} KB gzipped`)
      assert.isAtMost(total, 100 * 1024)
    }))

  it.effect("every Person API call of api.js and sw.js is an endpoint of AppApi", () =>
    Effect.gen(function*() {
      const api = yield* Effect.promise(() => import(pathToFileURL(path.join(publicDir, "app/api.js")).href))
      const declared = (api.declaredEndpoints as () => ReadonlyArray<{ method: string; path: string }>)()
      assert.isAbove(declared.length, 30)
      const missing = declared.filter((d) => !appApiRoutes.has(shape(d.method, d.path))).map((d) => `${d.method} ${d.path}`)
      assert.deepStrictEqual(missing, [], "calls of api.js that AppApi does not declare")

      // The worker cannot import api.js (a classic script): its calls are read from its text.
      const worker = read("sw.js")
      const calls = Array.from(
        worker.matchAll(/fetch\(\s*[`"](\/api\/app\/[^`"]*)[`"](?:,\s*\{[^}]*?method:\s*"([A-Z]+)")?/g),
        (m) => ({ method: m[2] ?? "GET", path: m[1]!.replace(/\$\{[^}]+\}/g, ":param") })
      )
      assert.deepStrictEqual(calls.map((c) => `${c.method} ${c.path}`).sort(), [
        "GET /api/app/push/web-key",
        "POST /api/app/devices",
        "POST /api/app/interactions/:param/answer"
      ])
      for (const call of calls) assert.isTrue(appApiRoutes.has(shape(call.method, call.path)), `${call.method} ${call.path}`)
    }))

  it.effect("the token page offers exactly the contract's scopes, in its order", () =>
    Effect.sync(() => {
      const page = read("app/pages/tokens.js")
      const list = /export const scopes = \[([\s\S]*?)\]/.exec(page)?.[1] ?? ""
      assert.deepStrictEqual(Array.from(list.matchAll(/"([^"]+)"/g), (m) => m[1]), [...Scopes])
    }))
})

describe("a console page asked for at a loopback address", () => {
  it("moves to the public URL when that names localhost on the same port, and only then", () => {
    assert.strictEqual(loopbackRedirect("http://localhost:8080", "127.0.0.1:8080", "/inbox?x=1"), "http://localhost:8080/inbox?x=1")
    assert.strictEqual(loopbackRedirect("http://localhost:8080", "[::1]:8080", "/"), "http://localhost:8080/")
    assert.strictEqual(loopbackRedirect("http://localhost", "127.0.0.1", "/"), "http://localhost/")
    assert.isUndefined(loopbackRedirect("http://localhost:8080", "localhost:8080", "/"), "already there")
    assert.isUndefined(loopbackRedirect("http://localhost:8080", "127.0.0.1:9090", "/"), "another port: another server")
    assert.isUndefined(loopbackRedirect("https://herald.example.net", "127.0.0.1:8080", "/"), "a real public URL: proxies reach it by loopback")
    assert.isUndefined(loopbackRedirect("http://localhost:8080", undefined, "/"))
  })
})
