/**
 * One spelling per path (http/CanonicalPath.ts): any other answers 404
 * before routing, and body limits and log redaction follow the matched route,
 * never a prefix of the URL. Over HTTP, on the whole service, with its Debug
 * access log captured.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Logger, References } from "effect"
import { isCanonicalPath } from "../../src/http/CanonicalPath.ts"
import { servedRoutes } from "../../src/http/Routes.ts"
import { makeAgent, testServerLayer } from "../../../../test/support/server.ts"
import { rawRequest } from "./rawHttp.ts"

// Every line the service logs, formatted as `LOG_FORMAT=logfmt` writes it.
const lines: Array<string> = []
const CapturedDebugLog = Layer.mergeAll(
  Logger.layer([Logger.map(Logger.formatLogFmt, (line) => void lines.push(line))]),
  Layer.succeed(References.MinimumLogLevel, "Debug")
)

const inbound = (path: string, body: string) =>
  rawRequest({ method: "POST", path, headers: { "content-type": "application/json" }, body })

const webhook = Effect.gen(function*() {
  const agent = yield* makeAgent(["services:write", "events:read"])
  const created = yield* agent.client.services.create({ payload: { title: "Canonical", url: "https://status.example.test" } })
  const path = new URL(created.webhookUrl).pathname
  return { agent, path, token: path.slice("/hooks/".length) }
}).pipe(Effect.orDie)

const notFound = { error: "No such route.", code: "NOT_FOUND" }

describe("canonical paths", () => {
  it("the form: case kept, no empty, dot or unreserved-escape segment, no `;`", () => {
    for (const path of ["/", "/hooks/hlw_x", "/api/app/tokens/", "/hooks/hlw_%E2%9C%93", "/a/%2F?x=%41", "/api/agent/events?limit=5"]) {
      assert.isTrue(isCanonicalPath(path), path)
    }
    for (const path of ["//hooks/x", "/hooks//x", "/hooks/x//", "/./hooks/x", "/hooks/../hooks/x", "/hooks/.", "/%68ooks/x", "/hooks/%7Ex",
      "/hooks/%2e", "/hooks/%4", "/hooks/%zz", "/hooks/x;y", "/hooks/x#y", "hooks/x", "http://h/hooks/x", "*"]) {
      assert.isFalse(isCanonicalPath(path), path)
    }
  })

  it("the only path parameter that is a credential is the inbound webhook's token", () => {
    const secret = servedRoutes.filter((r) => r.secret !== undefined).map((r) => [r.method, r.path, r.secret!.param, r.secret!.kind])
    assert.deepStrictEqual(secret, [["POST", "/hooks/:token", "token", "hlw"]])
  })
})

layer(testServerLayer().pipe(Layer.provide(CapturedDebugLog)), { timeout: "120 seconds", excludeTestServices: true })("canonical routes", (it) => {
  it.effect("every other spelling of a webhook URL answers 404, and nothing is delivered", () =>
    Effect.gen(function*() {
      const { agent, token } = yield* webhook
      for (const path of [`//hooks/${token}`, `/HOOKS/${token}`, `/%68ooks/${token}`, `/./hooks/${token}`, `/hooks/../hooks/${token}`, `/hooks/${token};x`]) {
        const answer = yield* inbound(path, JSON.stringify({ body: "spelled otherwise" }))
        assert.deepStrictEqual([answer.status, answer.body], [404, notFound], path)
      }
      assert.deepStrictEqual((yield* agent.client.history.events()).items, [])
    }))

  it.effect("routes match case-sensitively everywhere: an upper-case agent path is 404, not 200 or 405", () =>
    Effect.gen(function*() {
      const { secret } = yield* makeAgent(["events:read"])
      const authorization = { authorization: `Bearer ${secret}` }
      assert.strictEqual((yield* rawRequest({ method: "GET", path: "/api/agent/auth/status", headers: authorization })).status, 200)
      for (const method of ["GET", "DELETE"]) {
        const answer = yield* rawRequest({ method, path: "/API/AGENT/AUTH/STATUS", headers: authorization })
        assert.deepStrictEqual([answer.status, answer.body, answer.headers.allow], [404, notFound, undefined], method)
      }
    }))

  it.effect("the inbound body limit follows the route: 1.1 MB answers 413 on the canonical URL and with a trailing slash", () =>
    Effect.gen(function*() {
      const { path } = yield* webhook
      const big = JSON.stringify({ body: "x".repeat(1100 * 1024) })
      for (const target of [path, `${path}/`]) {
        const answer = yield* inbound(target, big)
        assert.strictEqual(answer.status, 413, target)
        assert.deepStrictEqual(answer.body, { error: "The body is over this route's limit of 1048576 bytes.", code: "PAYLOAD_TOO_LARGE" })
      }
      // The other spellings never reach the route (404 before any limit).
      assert.strictEqual((yield* inbound(`//hooks/${path.slice(7)}`, big)).status, 404)
      assert.strictEqual((yield* inbound(path, JSON.stringify({ body: "fits" }))).status, 202)
    }))

  it.effect("the Debug access log never shows the webhook token, however the URL is spelled", () =>
    Effect.gen(function*() {
      const { path, token } = yield* webhook
      const before = lines.length
      const requests = [
        inbound(path, JSON.stringify({ body: "logged" })),
        inbound(`${path}/`, JSON.stringify({ body: "logged" })),
        inbound(`//hooks/${token}`, "{}"),
        inbound(`/HOOKS/${token}`, "{}"),
        inbound(`/%68ooks/${token}`, "{}"),
        inbound(`/hooks/${token}?x=1`, "{}"),
        rawRequest({ method: "GET", path }),
        inbound(`/hooks/${token.slice(0, -1)}`, "{}")
      ]
      const statuses: Array<number> = []
      for (const request of requests) statuses.push((yield* request).status)
      assert.deepStrictEqual(statuses, [202, 202, 404, 404, 404, 400, 405, 404])
      const logged = lines.slice(before).filter((line) => line.includes("message=request"))
      assert.strictEqual(logged.length, requests.length, logged.join("\n"))
      for (const line of logged) assert.notInclude(line, token.slice(4, 20), line)
      assert.include(logged[0], "url=/hooks/…")
      assert.include(logged[2], "url=//hooks/…")
      assert.include(logged[3], "url=/…/…")
      assert.include(logged[5], `url="/hooks/…?x=1"`)
    }))
})
