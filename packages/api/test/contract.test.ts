/**
 * The contract's own rules: every Agent API endpoint declares its scopes (the
 * bearer middleware reads them), the scopes are the spec's, and the OpenAPI
 * document shows them in each description and as each security requirement.
 */
import { assert, describe, it } from "@effect/vitest"
import { AgentApi, AppApi, RequiredScopes, Scopes } from "@herald/api"
import { Context } from "effect"
import { HttpApi, OpenApi } from "effect/http-api"

const endpoints = (api: typeof AgentApi | typeof AppApi) => {
  const out: Array<{ group: string; name: string; method: string; path: string; annotations: Context.Context<never> }> = []
  HttpApi.reflect(api as never, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      out.push({ group: group.identifier, name: endpoint.identifier, method: endpoint.method, path: endpoint.path, annotations: endpoint.annotations })
    }
  })
  return out
}

describe("AgentApi", () => {
  it("every endpoint declares its required scopes, all from the Scope enumeration", () => {
    const all = endpoints(AgentApi)
    assert.isAbove(all.length, 0)
    for (const e of all) {
      const scopes = Context.getOrUndefined(e.annotations, RequiredScopes)
      assert.isDefined(scopes, `${e.method} ${e.path} lacks RequiredScopes`)
      for (const s of scopes!) assert.include(Scopes as ReadonlyArray<string>, s)
    }
  })

  it("serves exactly the spec's operations under /api/agent, with the spec's scopes", () => {
    const table = endpoints(AgentApi).map((e) =>
      `${e.method} ${e.path.replace(/:(\w+)/g, "{$1}")} ${(Context.getOrUndefined(e.annotations, RequiredScopes) ?? []).join(",")}`
    ).sort()
    assert.deepStrictEqual(table, [
      "DELETE /api/agent/apps/{id} apps:write",
      "DELETE /api/agent/connectors/{id} connectors:write",
      "DELETE /api/agent/devices/{id} devices:write",
      "DELETE /api/agent/mini-apps/{packageId} apps:write",
      "DELETE /api/agent/oncall/{groupId} oncall:write",
      "DELETE /api/agent/oncall/{groupId}/overrides/{overrideId} oncall:write",
      "DELETE /api/agent/services/{id} services:write",
      "DELETE /api/agent/teams/{id} teams:write",
      "DELETE /api/agent/teams/{id}/domain teams:write",
      "DELETE /api/agent/teams/{id}/groups/{groupId} teams:write",
      "DELETE /api/agent/teams/{id}/invites/{inviteId} teams:write",
      "DELETE /api/agent/teams/{id}/members/{userId} teams:write",
      "DELETE /api/agent/tokens/{id} tokens:manage",
      "DELETE /api/agent/webhooks/{id} services:write",
      "GET /api/agent/activities activities:read",
      "GET /api/agent/activities/{identifier} activities:read",
      "GET /api/agent/activity-feed events:read",
      "GET /api/agent/apps apps:read",
      "GET /api/agent/apps/{id} apps:read",
      "GET /api/agent/auth/status ",
      "GET /api/agent/billing billing:read",
      "GET /api/agent/connectors connectors:read",
      "GET /api/agent/connectors/{id} connectors:read",
      "GET /api/agent/connectors/{id}/deliveries connectors:write",
      "GET /api/agent/devices devices:read",
      "GET /api/agent/events events:read",
      "GET /api/agent/inbox/notifications inbox:read",
      "GET /api/agent/inbox/notifications/{id} inbox:read",
      "GET /api/agent/inbox/projects inbox:read",
      "GET /api/agent/interactions interactions:read",
      "GET /api/agent/interactions/{id} interactions:read",
      "GET /api/agent/interactions/{id}/wait interactions:read",
      "GET /api/agent/mini-apps apps:read",
      "GET /api/agent/mini-apps/export apps:read",
      "GET /api/agent/mini-apps/keys apps:read",
      "GET /api/agent/mini-apps/review apps:read",
      "GET /api/agent/mini-apps/{packageId} apps:read",
      "GET /api/agent/mini-apps/{packageId}/archive apps:read",
      "GET /api/agent/oncall/me oncall:read",
      "GET /api/agent/oncall/{groupId} oncall:read",
      "GET /api/agent/pages/{id} oncall:read",
      "GET /api/agent/services services:read",
      "GET /api/agent/services/{id} services:read",
      "GET /api/agent/teams teams:read",
      "GET /api/agent/teams/{id} teams:read",
      "GET /api/agent/teams/{id}/apps teams:read,apps:read",
      "GET /api/agent/teams/{id}/audit teams:read",
      "GET /api/agent/teams/{id}/devices teams:read",
      "GET /api/agent/teams/{id}/groups teams:read",
      "GET /api/agent/teams/{id}/groups/{groupId} teams:read",
      "GET /api/agent/teams/{id}/invites teams:read",
      "GET /api/agent/teams/{id}/oncall oncall:read",
      "GET /api/agent/teams/{id}/pages oncall:read",
      "GET /api/agent/tokens tokens:manage",
      "GET /api/agent/webhooks services:read",
      "GET /api/agent/webhooks/{id} services:read",
      "PATCH /api/agent/activities/{identifier} activities:write",
      "PATCH /api/agent/apps/{id} apps:write",
      "PATCH /api/agent/connectors/{id} connectors:write",
      "PATCH /api/agent/oncall/{groupId} oncall:write",
      "PATCH /api/agent/services/{id} services:write",
      "PATCH /api/agent/teams/{id} teams:write",
      "PATCH /api/agent/teams/{id}/groups/{groupId} teams:write",
      "PATCH /api/agent/teams/{id}/members/{userId} teams:write",
      "PATCH /api/agent/webhooks/{id} services:write",
      "POST /api/agent/activities activities:write",
      "POST /api/agent/activities/{identifier}/end activities:write",
      "POST /api/agent/apps apps:write",
      "POST /api/agent/apps/{id}/revoke apps:write",
      "POST /api/agent/apps/{id}/share apps:write",
      "POST /api/agent/auth/revoke ",
      "POST /api/agent/connectors connectors:write",
      "POST /api/agent/connectors/{id}/access connectors:write",
      "POST /api/agent/connectors/{id}/callback-access connectors:write",
      "POST /api/agent/connectors/{id}/heartbeat connectors:write",
      "POST /api/agent/connectors/{id}/rotate-secret connectors:write",
      "POST /api/agent/inbox/notifications/read-all inbox:write",
      "POST /api/agent/inbox/notifications/{id}/read inbox:write",
      "POST /api/agent/inbox/notifications/{id}/unread inbox:write",
      "POST /api/agent/interactions interactions:create",
      "POST /api/agent/interactions/{id}/cancel interactions:create",
      "POST /api/agent/mini-apps/publish apps:write",
      "POST /api/agent/mini-apps/{packageId}/block apps:write",
      "POST /api/agent/mini-apps/{packageId}/disable apps:write",
      "POST /api/agent/mini-apps/{packageId}/offer apps:write",
      "POST /api/agent/mini-apps/{packageId}/report apps:write",
      "POST /api/agent/notifications notifications:send",
      "POST /api/agent/notifications/{id}/withdraw notifications:send",
      "POST /api/agent/oncall/{groupId}/overrides oncall:write",
      "POST /api/agent/oncall/{groupId}/pages oncall:write",
      "POST /api/agent/pages/{id}/resolve oncall:write",
      "POST /api/agent/services services:write",
      "POST /api/agent/services/{id}/rotate services:write",
      "POST /api/agent/services/{id}/share services:write",
      "POST /api/agent/teams teams:write",
      "POST /api/agent/teams/{id}/domain teams:write",
      "POST /api/agent/teams/{id}/domain/verify teams:write",
      "POST /api/agent/teams/{id}/groups teams:write",
      "POST /api/agent/teams/{id}/invites teams:write",
      "POST /api/agent/teams/{id}/leave teams:write",
      "POST /api/agent/teams/{id}/oncall oncall:write",
      "POST /api/agent/webhooks services:write",
      "POST /api/agent/webhooks/{id}/rotate-secret services:write",
      "POST /api/agent/webhooks/{id}/test services:write"
    ])
  })

  it("the OpenAPI document is 3.1, version 1.0.0, titled as the spec, with scopes per operation", () => {
    const doc = OpenApi.fromApi(AgentApi) as unknown as {
      openapi: string
      info: { title: string; version: string; description: string }
      paths: Record<string, Record<string, { description: string; security: Array<Record<string, Array<string>>> }>>
      components: { securitySchemes: Record<string, { type: string; scheme: string }> }
    }
    assert.strictEqual(doc.openapi, "3.1.0")
    assert.strictEqual(doc.info.version, "1.0.0")
    assert.strictEqual(doc.info.title, "Scoped Agent API")
    assert.include(doc.info.description, "scoped bearer-token HTTP API")
    assert.strictEqual(doc.components.securitySchemes.agentToken!.type, "http")
    assert.strictEqual(doc.components.securitySchemes.agentToken!.scheme.toLowerCase(), "bearer")
    const list = doc.paths["/api/agent/tokens"]!.get!
    assert.deepStrictEqual(list.security, [{ agentToken: ["tokens:manage"] }])
    assert.include(list.description, "Scopes: `tokens:manage`.")
    const status = doc.paths["/api/agent/auth/status"]!.get!
    assert.deepStrictEqual(status.security, [{ agentToken: [] }])
    assert.include(status.description, "Scopes: none")
  })

  it("every declared error of every operation uses the spec's body", () => {
    const doc = OpenApi.fromApi(AgentApi) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    }
    const statuses = new Set<string>()
    for (const ops of Object.values(doc.paths)) for (const op of Object.values(ops)) for (const s of Object.keys(op.responses)) statuses.add(s)
    for (const s of ["400", "401", "403", "413", "429", "500"]) assert.isTrue(statuses.has(s), `status ${s} documented`)
  })
})

describe("AppApi", () => {
  it("lives under /api/app and needs a session", () => {
    const all = endpoints(AppApi)
    assert.isTrue(all.every((e) => e.path.startsWith("/api/app/")))
    const doc = OpenApi.fromApi(AppApi) as unknown as { paths: Record<string, Record<string, { security: unknown }>> }
    assert.deepStrictEqual(doc.paths["/api/app/me"]!.get!.security, [{ sessionToken: [] }])
  })
})
