/**
 * The audit log's address behind a reverse proxy: with HERALD_TRUSTED_PROXIES
 * naming the proxy (here the test's own loopback), an entry records the
 * client the proxy forwards for, the right-most X-Forwarded-For entry that is
 * not itself trusted, as the per-address limits count it (docs/operations.md,
 * TLS); a request with no forwarding header records the socket's address.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BlockList } from "node:net"
import { SqlClient } from "effect/sql"
import { makePerson, personClient, rawFetch, testServerLayer } from "../../../../test/support/server.ts"
import { seedTeam } from "../../../../test/support/teams.ts"
import { clientAddress } from "../../src/http/ClientAddress.ts"

const renameAs = (teamId: string, secret: string, name: string, forwardedFor?: string) =>
  rawFetch(`/api/agent/teams/${teamId}`, {
    method: "PATCH",
    headers: {
      authorization: `Bearer ${secret}`,
      "content-type": "application/json",
      ...(forwardedFor !== undefined ? { "x-forwarded-for": forwardedFor } : {})
    },
    body: JSON.stringify({ name })
  })

layer(testServerLayer({ HERALD_TRUSTED_PROXIES: "127.0.0.1" }), { excludeTestServices: true, timeout: "120 seconds" })("the audit log's address", (it) => {
  it.effect("behind a trusted proxy: the forwarded client; without the header: the socket's address", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("owner")
      const { teamId } = yield* seedTeam({ owner })
      const app = yield* personClient(owner.session)
      const { secret } = yield* app.tokens.create({ payload: { name: "renamer", scopes: ["teams:write"] } })
      assert.strictEqual((yield* renameAs(teamId, secret, "Forwarded", "198.51.100.1, 203.0.113.7")).status, 200)
      assert.strictEqual((yield* renameAs(teamId, secret, "Direct")).status, 200)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ ip: string | null }>`
        SELECT ip FROM team_audit WHERE team_id = ${teamId} ORDER BY created_at, id`
      assert.deepStrictEqual(rows.map((r) => r.ip), ["203.0.113.7", "127.0.0.1"])
    }))
})

describe("clientAddress", () => {
  it("an untrusted peer's X-Forwarded-For is not read; a trusted chain is walked from the right", () => {
    const trusted = new BlockList()
    trusted.addSubnet("10.0.0.0", 8)
    assert.strictEqual(clientAddress("192.0.2.9", "203.0.113.7", trusted), "192.0.2.9")
    assert.strictEqual(clientAddress("10.0.0.2", "203.0.113.7, 10.0.0.5", trusted), "203.0.113.7")
    assert.strictEqual(clientAddress("10.0.0.2", "not-an-address", trusted), "10.0.0.2")
    assert.strictEqual(clientAddress("::ffff:10.0.0.2", "2001:db8::1", trusted), "2001:db8::1")
    assert.strictEqual(clientAddress("10.0.0.2", "203.0.113.7", undefined), "10.0.0.2")
  })
})
