/**
 * No Herald secret in the Debug access log (issue 30): a value shaped like
 * any secret Herald hands out — API token, session, OAuth access and refresh
 * tokens, codes, client secrets, sign-in links, inbound webhook tokens,
 * connector callback secrets and passes, webhook signing secrets — is shown
 * as `…` wherever the URL carries it: a query value under any name, a
 * parameter name, a path segment, percent-encoded or not. A caller's
 * `X-Request-Id` shaped like one is replaced by a fresh id.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Logger, References } from "effect"
import { generateSecret } from "../../src/auth/Secrets.ts"
import { generateCallbackSecret } from "../../src/connectors/Callbacks.ts"
import { generateSigningSecret } from "../../src/webhooks/Signing.ts"
import { makeAgent, testServerLayer } from "../../../../test/support/server.ts"
import { rawRequest } from "./rawHttp.ts"

// Every line the service logs, formatted as `LOG_FORMAT=logfmt` writes it.
const lines: Array<string> = []
const CapturedDebugLog = Layer.mergeAll(
  Logger.layer([Logger.map(Logger.formatLogFmt, (line) => void lines.push(line))]),
  Layer.succeed(References.MinimumLogLevel, "Debug")
)

let seq = 0

/** Sends the request and answers the access log line of it (found by its request id). */
const loggedUrl = (path: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const id = `log-redaction-${++seq}`
    const answer = yield* rawRequest({ method: "GET", path, headers: { "x-request-id": id, ...headers } })
    const line = lines.find((l) => l.includes("message=request") && l.includes(`requestId=${id}`))
    assert.isDefined(line, path)
    return { answer, line: line!, url: urlOf(line!) }
  })

/** The `url` of a logfmt line (quoted when it holds `=` or a space). */
const urlOf = (line: string): string => {
  const m = /\burl=("(?:[^"\\]|\\.)*"|\S+)/u.exec(line)
  return m === null ? "" : m[1]!.startsWith("\"") ? JSON.parse(m[1]!) : m[1]!
}

layer(testServerLayer().pipe(Layer.provide(CapturedDebugLog)), { timeout: "60 seconds", excludeTestServices: true })("log redaction", (it) => {
  it.effect("a secret in a query value, a parameter name or a path segment is logged as …", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["interactions:read"])
      const auth = { authorization: `Bearer ${agent.secret}` }
      const hld = generateSecret("hld")
      const hlo = generateSecret("hlo")
      const cases: ReadonlyArray<readonly [path: string, secret: string, shown: string]> = [
        [`/api/agent/interactions?access_token=${hld}`, hld, "/api/agent/interactions?access_token=…"],
        [`/x?foo=${hlo}`, hlo, "/…?…"],
        [`/api/agent/interactions?foo=${hlo}&limit=5`, hlo, "/api/agent/interactions?foo=…&limit=5"],
        ...(["hls", "hlw", "hlr", "hla", "hlc", "hll"] as const).map((kind) => {
          const secret = generateSecret(kind)
          return [`/api/agent/interactions?x=${secret}`, secret, "/api/agent/interactions?x=…"] as const
        }),
        // Percent-encoded, inside a longer value, upper case, as a parameter's name, in a path segment.
        [`/api/agent/interactions?t=${hld.replace("_", "%5F")}`, hld.slice(4), "/api/agent/interactions?t=…"],
        [`/api/agent/interactions?t=${hld.replace("_", "%255F")}`, hld.slice(4), "/api/agent/interactions?t=…"],
        [`/api/agent/interactions?auth=Bearer%20${hld}`, hld, "/api/agent/interactions?auth=…"],
        [`/api/agent/interactions?t=${hld.toUpperCase()}`, hld.toUpperCase(), "/api/agent/interactions?t=…"],
        [`/api/agent/interactions?${hld}`, hld, "/api/agent/interactions?…"],
        [`/api/agent/interactions?${hld}=1&limit=5`, hld, "/api/agent/interactions?…&limit=5"],
        [`/api/agent/interactions/${hlo}`, hlo, "/api/agent/interactions/…"]
      ]
      for (const [path, secret, shown] of cases) {
        const { line, url } = yield* loggedUrl(path, auth)
        assert.notInclude(line, secret, path)
        assert.strictEqual(url, shown, path)
      }
      // The other secrets Herald hands out: callback secrets, passes, signing secrets (base64: `/`, `+`).
      for (const secret of [generateCallbackSecret(), `hcp_${"A".repeat(43)}`, `hcs_${"b-".repeat(20)}`, generateSigningSecret()]) {
        const { line, url } = yield* loggedUrl(`/api/agent/interactions?s=${encodeURIComponent(secret)}`, auth)
        assert.notInclude(line, secret.slice(6, 30), secret)
        assert.strictEqual(url, "/api/agent/interactions?s=…", secret)
      }
      const raw = `whsec_${"Ab+/".repeat(11)}`
      const { line } = yield* loggedUrl(`/api/agent/interactions?s=${raw}`, auth)
      assert.notInclude(line, raw.slice(6, 30))
      // Text that is no secret stays as written.
      const plain = yield* loggedUrl("/api/agent/interactions?limit=5&status=pending&note=hld_short", auth)
      assert.strictEqual(plain.url, "/api/agent/interactions?limit=5&status=pending&note=hld_short")
    }))

  it.effect("a caller's X-Request-Id shaped like a secret is replaced, so it is never on a log line", () =>
    Effect.gen(function*() {
      const secret = generateSecret("hld")
      const before = lines.length
      const answer = yield* rawRequest({ method: "GET", path: "/healthz", headers: { "x-request-id": secret } })
      assert.strictEqual(answer.status, 200)
      assert.notStrictEqual(answer.headers["x-request-id"], secret)
      assert.match(String(answer.headers["x-request-id"]), /^[0-9a-f-]{36}$/)
      assert.isTrue(lines.slice(before).some((l) => l.includes(`requestId=${answer.headers["x-request-id"]}`)))
      assert.isFalse(lines.slice(before).some((l) => l.includes(secret)))
    }))
})
