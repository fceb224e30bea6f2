/**
 * Gateway passes and sessions: a pass issued through the Person API to the
 * owner or a member of the linked on-call group's team, consumed once by
 * `access` (reuse and expiry: 401), the 12-hour session it opens, and that
 * session revalidated on every call (connector removed, session expired,
 * person no longer allowed: 401).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { hashSecret } from "../../src/auth/Secrets.ts"
import { makePerson, personClient, TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"
import { clientOf, connectorBody, outcome, seedOncallGroup } from "./support.ts"

const HOUR = 3_600_000

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("connector passes and sessions", (it) => {
  it.effect("a pass opens one 12-hour session; a second use is refused", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("conn-owner")
      const gateway = yield* clientOf(owner)
      const { connector } = yield* gateway.connectors.create({ payload: connectorBody() })
      const app = yield* personClient(owner.session)
      const before = Date.now()
      const issued = yield* app.connectors.issuePass({ params: { id: connector.id } })
      assert.match(issued.pass, /^hcp_/)
      const passLife = Date.parse(issued.expiresAt) - before
      assert.isAtLeast(passLife, 59_000)
      assert.isAtMost(passLife, 61_000)

      const opened = yield* gateway.connectors.access({ params: { id: connector.id }, payload: { pass: issued.pass } })
      assert.match(opened.session, /^hcs_/)
      assert.strictEqual(opened.userId, owner.person.id)
      const sessionLife = Date.parse(opened.expiresAt) - before
      assert.isAtLeast(sessionLife, 12 * HOUR - 2000)
      assert.isAtMost(sessionLife, 12 * HOUR + 2000)

      const again = yield* gateway.connectors.access({ params: { id: connector.id }, payload: { pass: issued.pass } }).pipe(Effect.flip)
      assert.strictEqual(again._tag, "PassInvalid")
      assert.strictEqual(yield* outcome(gateway.connectors.access({ params: { id: connector.id }, payload: { pass: "hcp_unknown" } })), "PassInvalid")

      // The session revalidates, unchanged, as often as the gateway asks.
      for (let i = 0; i < 2; i++) {
        const checked = yield* gateway.connectors.access({ params: { id: connector.id }, payload: { session: opened.session } })
        assert.deepStrictEqual(checked, opened)
      }
      // Only hashes at rest.
      const sql = yield* SqlClient.SqlClient
      const passes = yield* sql`SELECT 1 FROM connector_passes WHERE pass_hash = ${hashSecret(issued.pass)}`
      const sessions = yield* sql`SELECT 1 FROM connector_sessions WHERE token_hash = ${hashSecret(opened.session)}`
      assert.lengthOf(passes, 1)
      assert.lengthOf(sessions, 1)
    }))

  it.effect("an expired pass and an expired session are refused", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owner = yield* makePerson("conn-owner")
      const gateway = yield* clientOf(owner)
      const { connector } = yield* gateway.connectors.create({ payload: connectorBody() })
      const app = yield* personClient(owner.session)
      const stale = yield* app.connectors.issuePass({ params: { id: connector.id } })
      yield* sql`UPDATE connector_passes SET expires_at = now() - interval '1 second' WHERE pass_hash = ${hashSecret(stale.pass)}`
      assert.strictEqual(yield* outcome(gateway.connectors.access({ params: { id: connector.id }, payload: { pass: stale.pass } })), "PassInvalid")

      const fresh = yield* app.connectors.issuePass({ params: { id: connector.id } })
      const opened = yield* gateway.connectors.access({ params: { id: connector.id }, payload: { pass: fresh.pass } })
      yield* sql`UPDATE connector_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = ${hashSecret(opened.session)}`
      assert.strictEqual(
        yield* outcome(gateway.connectors.access({ params: { id: connector.id }, payload: { session: opened.session } })),
        "PassInvalid"
      )
    }))

  it.effect("a pass or session is bound to its connector; removing the connector ends its sessions", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("conn-owner")
      const gateway = yield* clientOf(owner)
      const first = (yield* gateway.connectors.create({ payload: connectorBody() })).connector
      const second = (yield* gateway.connectors.create({ payload: connectorBody({ name: "Second" }) })).connector
      const app = yield* personClient(owner.session)
      const pass = yield* app.connectors.issuePass({ params: { id: first.id } })
      assert.strictEqual(yield* outcome(gateway.connectors.access({ params: { id: second.id }, payload: { pass: pass.pass } })), "PassInvalid")
      const opened = yield* gateway.connectors.access({ params: { id: first.id }, payload: { pass: pass.pass } })
      assert.strictEqual(
        yield* outcome(gateway.connectors.access({ params: { id: second.id }, payload: { session: opened.session } })),
        "PassInvalid"
      )
      assert.strictEqual(yield* outcome(gateway.connectors.access({ params: { id: first.id }, payload: { session: opened.session } })), "ok")
      yield* gateway.connectors.remove({ params: { id: first.id } })
      assert.strictEqual(
        yield* outcome(gateway.connectors.access({ params: { id: first.id }, payload: { session: opened.session } })),
        "PassInvalid"
      )
    }))

  it.effect("members of the linked group's team get passes; leaving the team or unlinking ends their session", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { admin, member, outsider, owner, teamId } = yield* seedRoles("team")
      const groupId = yield* seedOncallGroup(teamId)
      const gateway = yield* clientOf(owner)
      const { connector } = yield* gateway.connectors.create({ payload: connectorBody({ oncallGroupId: groupId }) })

      const outsiderApp = yield* personClient(outsider.session)
      assert.strictEqual(yield* outcome(outsiderApp.connectors.issuePass({ params: { id: connector.id } })), "NotFound")

      const memberApp = yield* personClient(member.session)
      const memberPass = yield* memberApp.connectors.issuePass({ params: { id: connector.id } })
      const memberSession = yield* gateway.connectors.access({ params: { id: connector.id }, payload: { pass: memberPass.pass } })
      assert.strictEqual(memberSession.userId, member.person.id)

      const adminApp = yield* personClient(admin.session)
      const adminPass = yield* adminApp.connectors.issuePass({ params: { id: connector.id } })
      const adminSession = yield* gateway.connectors.access({ params: { id: connector.id }, payload: { pass: adminPass.pass } })

      // The member leaves the team: their session is refused at the next call.
      yield* sql`DELETE FROM team_members WHERE team_id = ${teamId} AND user_id = ${member.person.id}`
      assert.strictEqual(
        yield* outcome(gateway.connectors.access({ params: { id: connector.id }, payload: { session: memberSession.session } })),
        "PassInvalid"
      )
      assert.strictEqual(yield* outcome(memberApp.connectors.issuePass({ params: { id: connector.id } })), "NotFound")

      // A pass issued while allowed is refused once the person no longer is.
      const late = yield* adminApp.connectors.issuePass({ params: { id: connector.id } })
      yield* gateway.connectors.update({ params: { id: connector.id }, payload: { oncallGroupId: null } })
      assert.strictEqual(yield* outcome(gateway.connectors.access({ params: { id: connector.id }, payload: { pass: late.pass } })), "PassInvalid")
      assert.strictEqual(
        yield* outcome(gateway.connectors.access({ params: { id: connector.id }, payload: { session: adminSession.session } })),
        "PassInvalid"
      )
    }))
})
