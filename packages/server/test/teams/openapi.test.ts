/**
 * Issue 17's "done means", read from the served documents: the 29 Agent API
 * operations of teams, families and web apps and the 3 Person API operations
 * (invite accept, app consent and preferences) are each served with their
 * scopes as the security requirement and the error statuses a caller can
 * meet listed among their responses.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

type Doc = { paths: Record<string, Record<string, { security?: Array<Record<string, Array<string>>>; responses: Record<string, unknown> }>> }

/** method, path, scopes, statuses beyond 401/403 (agent) or 401 (person) that the operation must list. */
const agentOperations: ReadonlyArray<readonly [string, string, ReadonlyArray<string>, ReadonlyArray<number>]> = [
  ["get", "/teams", ["teams:read"], []],
  ["post", "/teams", ["teams:write"], [400, 422]],
  ["get", "/teams/{id}", ["teams:read"], [404]],
  ["patch", "/teams/{id}", ["teams:write"], [400, 404]],
  ["delete", "/teams/{id}", ["teams:write"], [404]],
  ["post", "/teams/{id}/leave", ["teams:write"], [404, 409]],
  ["patch", "/teams/{id}/members/{userId}", ["teams:write"], [404]],
  ["delete", "/teams/{id}/members/{userId}", ["teams:write"], [404]],
  ["get", "/teams/{id}/invites", ["teams:read"], [404]],
  ["post", "/teams/{id}/invites", ["teams:write"], [400, 404, 422]],
  ["delete", "/teams/{id}/invites/{inviteId}", ["teams:write"], [404]],
  ["get", "/teams/{id}/apps", ["teams:read", "apps:read"], [404]],
  ["get", "/teams/{id}/groups", ["teams:read"], [404]],
  ["post", "/teams/{id}/groups", ["teams:write"], [400, 404, 422]],
  ["get", "/teams/{id}/groups/{groupId}", ["teams:read"], [404]],
  ["patch", "/teams/{id}/groups/{groupId}", ["teams:write"], [400, 404]],
  ["delete", "/teams/{id}/groups/{groupId}", ["teams:write"], [404]],
  ["get", "/teams/{id}/devices", ["teams:read"], [404]],
  ["post", "/teams/{id}/domain", ["teams:write"], [400, 404]],
  ["delete", "/teams/{id}/domain", ["teams:write"], [404]],
  ["post", "/teams/{id}/domain/verify", ["teams:write"], [404, 409, 429]],
  ["get", "/teams/{id}/audit", ["teams:read"], [400, 404]],
  ["get", "/apps", ["apps:read"], []],
  ["post", "/apps", ["apps:write"], [400, 422]],
  ["get", "/apps/{id}", ["apps:read"], [404]],
  ["patch", "/apps/{id}", ["apps:write"], [400, 404]],
  ["delete", "/apps/{id}", ["apps:write"], [404]],
  ["post", "/apps/{id}/revoke", ["apps:write"], [404]],
  ["post", "/apps/{id}/share", ["apps:write"], [404]]
]

const personOperations: ReadonlyArray<readonly [string, string, ReadonlyArray<number>]> = [
  ["post", "/invites/accept", [400, 403, 404, 409, 422]],
  ["post", "/apps/{id}/consent", [404]],
  ["patch", "/apps/{id}/preferences", [400, 404]]
]

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("teams and apps in the served OpenAPI", (it) => {
  it.effect("all 32 operations are served with their scopes and error statuses", () =>
    Effect.gen(function*() {
      const agent = (yield* rawFetch("/api/agent/openapi.json")).body as Doc
      const person = (yield* rawFetch("/api/app/openapi.json")).body as Doc
      for (const [method, path, scopes, statuses] of agentOperations) {
        const op = agent.paths[`/api/agent${path}`]?.[method]
        assert.isDefined(op, `${method.toUpperCase()} ${path} is served`)
        assert.deepStrictEqual(op!.security, [{ agentToken: [...scopes] }], `${method.toUpperCase()} ${path} scopes`)
        for (const status of [401, 403, ...statuses]) {
          assert.property(op!.responses, String(status), `${method.toUpperCase()} ${path} lists ${status}`)
        }
      }
      for (const [method, path, statuses] of personOperations) {
        const op = person.paths[`/api/app${path}`]?.[method]
        assert.isDefined(op, `${method.toUpperCase()} /api/app${path} is served`)
        assert.deepStrictEqual(op!.security, [{ sessionToken: [] }], `${method.toUpperCase()} /api/app${path} needs a session`)
        for (const status of [401, ...statuses]) {
          assert.property(op!.responses, String(status), `${method.toUpperCase()} /api/app${path} lists ${status}`)
        }
      }
    }))
})
