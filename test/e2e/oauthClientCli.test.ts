/**
 * `herald admin oauth-client create|delete` end to end, with registration
 * closed (`HERALD_OAUTH_REGISTRATION=closed`): `POST /oauth/register` answers
 * 403 naming the command, the command registers a client a running server
 * accepts and trusts (an invalid request is redirected back with `error`),
 * a refused redirect URI fails the command, and `delete` removes the client.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { childDatabase } from "../support/database.ts"
import { cli, cliJson, startServer } from "../support/process.ts"

describe("herald admin oauth-client", () => {
  it.effect("registers a trusted client while registration is closed, and deletes it", () =>
    Effect.gen(function*() {
      const database = yield* childDatabase
      const env = { ...database.env, HERALD_OAUTH_REGISTRATION: "closed" }
      const server = yield* startServer(env)
      const post = yield* Effect.promise(() =>
        fetch(`${server.baseUrl}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ redirect_uris: ["https://tool.example/cb"] })
        }).then(async (r) => ({ status: r.status, body: await r.json() as { error: string; error_description: string } })))
      assert.strictEqual(post.status, 403)
      assert.include(post.body.error_description, "herald admin oauth-client create")

      const created = yield* cliJson<{ client_id: string; client_secret?: string; redirect_uris: Array<string>; registered_by: string }>(
        ["admin", "oauth-client", "create", "--name", "Team tool", "--redirect-uri", "https://tool.example/cb", "--redirect-uri", "com.example.tool:/cb"],
        env
      )
      assert.match(created.client_id, /^ocl_/)
      assert.match(created.client_secret ?? "", /^hlc_/)
      assert.deepStrictEqual(created.redirect_uris, ["https://tool.example/cb", "com.example.tool:/cb"])
      assert.strictEqual(created.registered_by, "operator")

      // Trusted although no person approved it yet: the error goes back to the client.
      const query = new URLSearchParams({ response_type: "x", client_id: created.client_id, redirect_uri: "https://tool.example/cb", state: "s1" })
      const authorize = yield* Effect.promise(() => fetch(`${server.baseUrl}/oauth/authorize?${query}`, { redirect: "manual" }))
      assert.strictEqual(authorize.status, 302)
      assert.strictEqual(new URL(authorize.headers.get("location")!).searchParams.get("error"), "unsupported_response_type")

      const refused = yield* cli(["admin", "oauth-client", "create", "--name", "Bad", "--redirect-uri", "search-ms:query=x"], env)
      assert.notStrictEqual(refused.code, 0)
      assert.include(refused.stderr, "invalid_redirect_uri")

      const deleted = yield* cliJson<{ deleted: string }>(["admin", "oauth-client", "delete", "--id", created.client_id], env)
      assert.strictEqual(deleted.deleted, created.client_id)
      const gone = yield* Effect.promise(() => fetch(`${server.baseUrl}/oauth/authorize?${query}`, { redirect: "manual" }))
      assert.strictEqual(gone.status, 400)
      assert.isNull(gone.headers.get("location"))
    }).pipe(Effect.scoped), 120_000)
})
