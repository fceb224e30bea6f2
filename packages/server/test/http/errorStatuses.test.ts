/**
 * Over HTTP, every error code the contract declares that a caller can cause is
 * caused once, on a representative route, and the answer is checked against
 * the served OpenAPI document: the status is the one the operation lists for
 * that code, and the body validates against that response's schema (which
 * lists no `_tag`). Not caused here, for want of a deterministic trigger:
 * DOMAIN_NOT_VERIFIED and DNS_LOOKUP_FAILED (they need a DNS server:
 * teams/domain.test.ts runs one), IDEMPOTENCY_KEY_IN_USE,
 * RATE_LIMITED (rateLimits.test.ts), WITHDRAW_FAILED (notifications.test.ts),
 * INTERNAL_ERROR and SERVICE_UNAVAILABLE; their statuses are checked
 * statically by packages/api/test/errorStatuses.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Schema, SchemaRepresentation } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

type JsonSchema = { $ref?: string; anyOf?: Array<JsonSchema>; properties?: Record<string, { enum?: Array<string> }> }
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }> }>>
  components: { schemas: Record<string, JsonSchema> }
}

const refsOf = (schema: JsonSchema | undefined): Array<string> =>
  schema === undefined ? [] : schema.$ref !== undefined
    ? [schema.$ref.replace("#/components/schemas/", "")]
    : (schema.anyOf ?? []).flatMap(refsOf)

/** The statuses (and error schema names) the document lists `code` under for the operation a request hits. */
const declaredFor = (doc: Doc, method: string, url: string, code: string) => {
  const path = url.split("?")[0]!
  const template = Object.keys(doc.paths).find((p) => new RegExp(`^${p.replace(/\{\w+\}/g, "[^/]+")}$`).test(path))
  assert.isDefined(template, `no operation for ${path}`)
  const responses = doc.paths[template!]![method.toLowerCase()]!.responses
  return Object.entries(responses).flatMap(([status, response]) =>
    refsOf(response.content?.["application/json"]?.schema)
      .filter((name) => doc.components.schemas[name]?.properties?.code?.enum?.includes(code))
      .map((name) => ({ status: Number(status), name }))
  )
}

/** Decodes a body with the document's schema, refusing any key the schema does not list. */
const validates = (doc: Doc, name: string, body: unknown) => {
  const definitions = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll("#/components/schemas/", "#/$defs/"))
  const schema = SchemaRepresentation.fromJsonSchemaDocument({
    dialect: "draft-2020-12",
    schema: { $ref: `#/$defs/${name}` },
    definitions
  })
  return Schema.decodeUnknownExit(schema as Schema.Codec<unknown>)(body, { onExcessProperty: "error" })._tag === "Success"
}

const json = (token: string | undefined, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body)
})
const bearer = (token: string, method = "GET"): RequestInit => ({ method, headers: { authorization: `Bearer ${token}` } })

let seq = 0
const pushToken = (label: string) => `${label}-${++seq}-${Date.now()}`

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("declared error statuses over HTTP", (it) => {
  it.effect("the served documents' error schemas list no `_tag` (no body carries one)", () =>
    Effect.gen(function*() {
      for (const path of ["/api/agent/openapi.json", "/api/app/openapi.json", "/hooks/openapi.json"]) {
        const doc = (yield* rawFetch(path)).body as Doc
        const errorSchemas = new Set(Object.values(doc.paths).flatMap((operations) =>
          Object.values(operations).flatMap((operation) =>
            Object.entries(operation.responses).filter(([status]) => Number(status) >= 400)
              .flatMap(([, response]) => refsOf(response.content?.["application/json"]?.schema)))))
        assert.isAbove(errorSchemas.size, 5, path)
        for (const name of errorSchemas) assert.notProperty(doc.components.schemas[name]!.properties ?? {}, "_tag", `${path} ${name}`)
      }
    }))

  it.effect("each error code answers with the status its operation declares, in a body its schema admits", () =>
    Effect.gen(function*() {
      const doc = (yield* rawFetch("/api/agent/openapi.json")).body as Doc
      const appDoc = (yield* rawFetch("/api/app/openapi.json")).body as Doc
      const agent = yield* makeAgent([
        "tokens:manage", "notifications:send", "interactions:create", "interactions:read", "activities:read",
        "activities:write", "inbox:read", "services:read", "services:write", "teams:write", "connectors:write"
      ])
      const narrow = yield* makeAgent([])
      const secret = agent.secret
      const seen = new Set<string>()

      const check = (label: string, method: string, url: string, init: RequestInit, code: string) =>
        Effect.gen(function*() {
          const res = yield* rawFetch(url, { ...init, method })
          const body = res.body as { code?: string }
          assert.strictEqual(body.code, code, `${label}: ${JSON.stringify(res.body)}`)
          const declared = declaredFor(url.startsWith("/api/app/") ? appDoc : doc, method, url, code)
          assert.deepStrictEqual(declared.map((d) => d.status), [res.status], `${label}: ${code} declared at ${JSON.stringify(declared)}`)
          assert.isTrue(validates(url.startsWith("/api/app/") ? appDoc : doc, declared[0]!.name, res.body), `${label}: body fits its schema`)
          seen.add(code)
        })

      yield* check("no token", "GET", "/api/agent/auth/status", {}, "UNAUTHORIZED")
      yield* check("missing scope", "GET", "/api/agent/tokens", bearer(narrow.secret), "MISSING_SCOPE")
      yield* check("unknown token id", "DELETE", "/api/agent/tokens/tok_0000000000000000000000000z", bearer(secret, "DELETE"), "NOT_FOUND")
      yield* check("limit out of range", "GET", "/api/agent/tokens?limit=0", bearer(secret), "VALIDATION_FAILED")
      yield* check("body over 1 MiB", "POST", "/api/agent/notifications", json(secret, { title: "t", body: "x".repeat(1_100_000) }), "PAYLOAD_TOO_LARGE")
      yield* check("xml body", "POST", "/api/agent/notifications", json(secret, "<x/>", { "content-type": "application/xml" }), "UNSUPPORTED_MEDIA_TYPE")
      yield* check("garbled cursor", "GET", "/api/agent/inbox/notifications?cursor=abc.def", bearer(secret), "BAD_REQUEST")
      yield* check("private webhook target", "POST", "/api/agent/webhooks", json(secret, { name: "w", url: "https://127.0.0.1/x" }), "WEBHOOK_TARGET_REFUSED")

      yield* agent.app.devices.register({ payload: { platform: "android", pushToken: pushToken("plain") } })
      const first = yield* rawFetch("/api/agent/notifications", json(secret, { title: "a", body: "b" }, { "idempotency-key": "k1" }))
      assert.strictEqual(first.status, 201)
      yield* check("idempotency key, other body", "POST", "/api/agent/notifications", json(secret, { title: "a", body: "c" }, { "idempotency-key": "k1" }), "IDEMPOTENCY_KEY_REUSED")

      const prompt = yield* agent.client.interactions.create({ payload: { kind: "approval", title: "t", prompt: "p" } })
      const id = prompt.interaction.id
      // A browser's session cookie changes nothing without the CSRF header (a page of another origin cannot send it).
      yield* check("cookie without the CSRF header", "POST", "/api/app/tokens", {
        headers: { cookie: `herald_session=${agent.session}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "from another origin", scopes: [] })
      }, "CSRF_REJECTED")
      yield* check("answer of the wrong kind", "POST", `/api/app/interactions/${id}/answer`, json(agent.session, { status: "yes" }), "ANSWER_DOES_NOT_FIT_KIND")
      yield* agent.client.interactions.cancel({ params: { id } })
      yield* check("cancel twice", "POST", `/api/agent/interactions/${id}/cancel`, json(secret, {}), "CONFLICT")
      yield* check("card without an interactive device", "POST", "/api/agent/interactions", json(secret, { kind: "approval", title: "t", prompt: "p", presentation: "live_activity" }), "INTERACTIVE_LIVE_ACTIVITY_UNSUPPORTED")
      yield* check("no live-activity device", "POST", "/api/agent/activities", json(secret, { key: "none", props: { title: "t" } }), "NO_LIVE_ACTIVITY_DEVICE")

      // A phone that shows interactive live activities, filled with five.
      const phone = yield* agent.app.devices.register({
        payload: { platform: "android", pushToken: pushToken("card"), liveActivitiesCapable: true, interactiveLiveActivitiesCapable: true }
      })
      yield* check("props over 4 KB", "POST", "/api/agent/activities", json(secret, { key: "big", props: { title: "t", notes: "x".repeat(5000) } }), "ACTIVITY_PAYLOAD_TOO_LARGE")
      for (let n = 0; n < 5; n++) yield* agent.client.activities.start({ payload: { key: `a${n}`, props: { title: `a${n}` }, deviceIds: [phone.id] } })
      yield* check("same key again", "POST", "/api/agent/activities", json(secret, { key: "a0", props: { title: "again" } }), "ACTIVITY_KEY_CONFLICT")
      yield* check("a sixth activity", "POST", "/api/agent/activities", json(secret, { key: "a5", props: { title: "sixth" }, deviceIds: [phone.id] }), "ACTIVITY_CAPACITY_EXCEEDED")
      yield* check("a sixth, as a prompt card", "POST", "/api/agent/interactions", json(secret, { kind: "approval", title: "t", prompt: "p", presentation: "live_activity" }), "ACTIVITY_CAPACITY_EXCEEDED")
      yield* agent.client.activities.end({ params: { identifier: "a0" } })
      yield* check("update after the end", "PATCH", "/api/agent/activities/a0", { ...json(secret, { props: { title: "late" } }), method: "PATCH" }, "ACTIVITY_ENDED")

      // An account at its 1,000 services (set up in SQL: a thousand creates would be slow).
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO services (id, user_id, title, token_hash)
        SELECT 'svc_codes' || lpad(n::text, 4, '0'), ${agent.person.id}, 'bulk', 'codes-' || ${agent.person.id} || '-' || n
        FROM generate_series(1, 1000) AS n`
      yield* check("one service too many", "POST", "/api/agent/services", json(secret, { title: "too many" }), "LIMIT_REACHED")

      // Teams: only families are created through the API; a public mailbox domain is refused.
      yield* check("a workplace team", "POST", "/api/agent/teams", json(secret, { kind: "team", name: "Acme" }), "FORBIDDEN")
      const family = yield* rawFetch("/api/agent/teams", json(secret, { kind: "family", name: "Home" }))
      const familyId = (family.body as { id: string }).id
      yield* check("a public mailbox domain", "POST", `/api/agent/teams/${familyId}/domain`, json(secret, { domain: "gmail.com" }), "PUBLIC_EMAIL_DOMAIN")

      // Connectors: an unknown gateway pass, an unsigned callback.
      const connector = yield* rawFetch("/api/agent/connectors", json(secret, { name: "c", routes: [{ pathPrefix: "/", upstream: "http://127.0.0.1:1" }] }))
      const connectorId = (connector.body as { connector: { id: string } }).connector.id
      yield* check("an unknown pass", "POST", `/api/agent/connectors/${connectorId}/access`, json(secret, { pass: "hcp_unknown" }), "PASS_INVALID")
      yield* check("an unsigned callback", "POST", `/api/agent/connectors/${connectorId}/callback-access`, json(secret, {
        deliveryId: "whd_unknown", timestamp: Math.floor(Date.now() / 1000), signature: "AAAA", bodySha256: "0".repeat(64)
      }), "CALLBACK_INVALID")

      // Every code either document declares was caused above, but the few named at the top.
      const notCaused = ["DOMAIN_NOT_VERIFIED", "DNS_LOOKUP_FAILED", "IDEMPOTENCY_KEY_IN_USE", "RATE_LIMITED", "WITHDRAW_FAILED", "INTERNAL_ERROR", "SERVICE_UNAVAILABLE"]
      const declaredCodes = new Set([doc, appDoc].flatMap((d) =>
        Object.values(d.components.schemas).flatMap((schema) => schema.properties?.code?.enum ?? [])))
      assert.deepStrictEqual([...seen].sort(), [...declaredCodes].filter((code) => !notCaused.includes(code)).sort())
    }))
})
