/**
 * A manifest's `privacyUrl` and `supportUrl` are links a person taps, under
 * the rule of every other link field (issue 30): no `javascript:`, `data:`,
 * `vbscript:`, `file:`, `blob:` or `about:` link, in any case; web, app and
 * `mailto:` links stay. A package stored before the rule still reads, without
 * the refused link.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { archiveFor, issuePaths, publishRaw } from "./support.ts"

const refused = [
  "javascript:alert(document.cookie)",
  "JavaScript:alert(1)",
  " javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "DATA:text/html;base64,PHNjcmlwdD4=",
  "vbscript:msgbox(1)",
  "file:///etc/passwd",
  "blob:https://example.test/0b1c",
  "about:blank"
]

const accepted = ["https://example.test/privacy", "mailto:support@example.test", "myapp://support"]

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app link schemes", (it) => {
  it.effect("privacyUrl and supportUrl refuse javascript:, data: and the other refused schemes (400, naming the field)", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["apps:read", "apps:write"])
      for (const field of ["privacyUrl", "supportUrl"]) {
        for (const link of refused) {
          const archive = archiveFor(agent.person.id)
          archive.manifest[field] = link
          const answer = yield* publishRaw(agent.secret, JSON.stringify(archive))
          assert.strictEqual(answer.status, 400, `${field} ${link}: ${answer.status}`)
          assert.strictEqual(answer.body.code, "VALIDATION_FAILED")
          assert.deepStrictEqual(issuePaths(answer.body), [`body.manifest.${field}`], `${field} ${link}`)
        }
        for (const link of accepted) {
          const archive = archiveFor(agent.person.id)
          archive.manifest[field] = link
          const answer = yield* publishRaw(agent.secret, JSON.stringify(archive))
          assert.strictEqual(answer.status, 201, `${field} ${link}: ${JSON.stringify(answer.body).slice(0, 200)}`)
          assert.strictEqual(answer.body.manifest[field], link)
        }
      }
    }))

  it.effect("a package stored before the rule still reads, without its refused links", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const agent = yield* makeAgent(["apps:read", "apps:write"])
      const archive = archiveFor(agent.person.id)
      archive.manifest.supportUrl = "https://example.test/help"
      const published = yield* publishRaw(agent.secret, JSON.stringify(archive))
      assert.strictEqual(published.status, 201)
      const id = published.body.packageId as string
      yield* sql`UPDATE mini_app_packages SET manifest = manifest || ${JSON.stringify({ privacyUrl: "javascript:alert(1)" })}::jsonb
                 WHERE id = ${id}`
      const get = (path: string) => rawFetch(path, { headers: { authorization: `Bearer ${agent.secret}` } })
      const one = yield* get(`/api/agent/mini-apps/${id}`)
      assert.strictEqual(one.status, 200)
      const manifest = (one.body as { manifest: Record<string, unknown> }).manifest
      assert.notProperty(manifest, "privacyUrl")
      assert.strictEqual(manifest.supportUrl, "https://example.test/help")
      const list = yield* get("/api/agent/mini-apps")
      assert.strictEqual(list.status, 200)
      assert.notInclude(JSON.stringify(list.body), "javascript:")
    }))
})
