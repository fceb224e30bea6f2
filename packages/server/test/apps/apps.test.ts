/**
 * Web apps over HTTP with the typed client: registering (an existing URL is
 * updated), the per-person cap, updating (a new origin clears consent and
 * changes `storageScope`), each viewer's own consent and disclosure, revoke,
 * and delete.
 */
import { assert, layer } from "@effect/vitest"
import { AppUpdated } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { seedTeam } from "../../../../test/support/teams.ts"
import { MAX_APPS } from "../../src/config/Limits.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { seedAppRoles, withClients } from "./appsSupport.ts"

const post = (secret: string, path: string, body: unknown, method = "POST") =>
  rawFetch(`/api/agent${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("web apps", (it) => {
  it.effect("POST /apps registers (201), lists newest first; the same origin + path updates that app (200)", () =>
    Effect.gen(function*() {
      const me = yield* withClients(yield* makePerson("apps"))
      const first = yield* me.agent.apps.create({
        payload: { name: "Board", url: "https://board.example.test/app?x=1", iconUrl: "https://board.example.test/i.png", projectId: "ops" }
      })
      assert.isFalse(first instanceof AppUpdated)
      assert.match(first.id, /^app_/)
      assert.strictEqual(first.origin, "https://board.example.test")
      assert.strictEqual(first.url, "https://board.example.test/app?x=1")
      assert.strictEqual(first.projectId, "ops")
      assert.strictEqual(first.projectName, "ops")
      assert.strictEqual(first.createdBy, me.id)
      assert.isNull(first.addedBy)
      assert.isNull(first.team)
      assert.isFalse(first.shareName)
      assert.isFalse(first.shareEmail)
      assert.isNull(first.consentedAt)
      assert.isNull(first.lastOpenedAt)
      assert.match(first.storageScope, /^[A-Za-z0-9_-]{43}$/)

      const second = yield* me.agent.apps.create({ payload: { name: "Wiki", url: "https://wiki.example.test/" } })
      // Same origin + path, another query: the first app, updated; fields not given stay.
      const again = yield* me.agent.apps.create({ payload: { name: "Board 2", url: "https://board.example.test/app?x=2" } })
      assert.instanceOf(again, AppUpdated)
      assert.strictEqual(again.id, first.id)
      assert.strictEqual(again.name, "Board 2")
      assert.strictEqual(again.url, "https://board.example.test/app?x=2")
      assert.strictEqual(again.iconUrl, "https://board.example.test/i.png")
      assert.strictEqual(again.projectId, "ops")
      assert.strictEqual(again.storageScope, first.storageScope)

      const listed = yield* me.agent.apps.list()
      assert.deepStrictEqual(listed.items.map((a) => a.id), [second.id, first.id])
      assert.strictEqual((yield* me.agent.apps.get({ params: { id: first.id } })).name, "Board 2")

      // The statuses on the wire: 201 new, 200 updated.
      const created = yield* post(me.secret, "/apps", { name: "N", url: "https://n.example.test/a" })
      assert.strictEqual(created.status, 201)
      const updated = yield* post(me.secret, "/apps", { name: "N", url: "https://n.example.test/a#frag" })
      assert.strictEqual(updated.status, 200)
    }))

  it.effect("only http(s) URLs of sane length; unknown fields, consent and preferences are refused with 400", () =>
    Effect.gen(function*() {
      const me = yield* withClients(yield* makePerson("apps"))
      const secret = me.secret
      for (const body of [
        { name: "X", url: "javascript:alert(1)" },
        { name: "X", url: "ftp://files.example.test/" },
        { name: "X", url: `https://x.example.test/${"a".repeat(2100)}` },
        { name: "", url: "https://x.example.test/" },
        { name: "x".repeat(101), url: "https://x.example.test/" },
        { name: "X" }
      ]) {
        assert.strictEqual((yield* post(secret, "/apps", body)).status, 400, JSON.stringify(body).slice(0, 80))
      }
      const app = yield* me.agent.apps.create({ payload: { name: "X", url: "https://x.example.test/" } })
      for (const body of [{ shareName: true }, { consentedAt: "2026-01-01T00:00:00Z" }, { url: "mailto:a@b.test" }]) {
        assert.strictEqual((yield* post(secret, `/apps/${app.id}`, body, "PATCH")).status, 400, JSON.stringify(body))
      }
    }))

  it.effect("a person adds at most MAX_APPS apps (422 LIMIT_REACHED); updating a known URL still works at the cap", () =>
    Effect.gen(function*() {
      const me = yield* withClients(yield* makePerson("apps"))
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < MAX_APPS; i++) {
        const id = yield* makeId("app")
        yield* sql`INSERT INTO apps (id, user_id, name, url, origin, url_key)
                   VALUES (${id}, ${me.id}, ${`a${i}`}, ${`https://s.example.test/${i}`}, 'https://s.example.test', ${`https://s.example.test/${i}`})`
      }
      const refused = yield* Effect.flip(me.agent.apps.create({ payload: { name: "one more", url: "https://t.example.test/" } }))
      assert.strictEqual(refused._tag, "LimitReached")
      assert.strictEqual((refused as { limit: number }).limit, MAX_APPS)
      const known = yield* me.agent.apps.create({ payload: { name: "renamed", url: "https://s.example.test/7" } })
      assert.instanceOf(known, AppUpdated)
      assert.strictEqual(known.name, "renamed")
    }))

  it.effect("PATCH updates name, URL, icon, project; a new origin clears every viewer's consent and changes storageScope", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedAppRoles
      const app = yield* member.agent.apps.create({ payload: { name: "Dash", url: "https://dash.example.test/home" } })
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      yield* member.app.apps.consent({ params: { id: app.id } })
      const ownerConsented = yield* owner.app.apps.consent({ params: { id: app.id } })
      assert.isNotNull(ownerConsented.consentedAt)

      // Same origin, new path: consent and scope stay.
      const samePlace = yield* member.agent.apps.update({
        params: { id: app.id },
        payload: { name: "Dash 2", url: "https://dash.example.test/v2", iconUrl: "https://dash.example.test/i.png", projectId: "p1" }
      })
      assert.strictEqual(samePlace.name, "Dash 2")
      assert.strictEqual(samePlace.iconUrl, "https://dash.example.test/i.png")
      assert.strictEqual(samePlace.projectName, "p1")
      assert.isNotNull(samePlace.consentedAt)
      const before = yield* owner.agent.apps.get({ params: { id: app.id } })
      assert.isNotNull(before.consentedAt)

      const moved = yield* member.agent.apps.update({ params: { id: app.id }, payload: { url: "https://dash.example.org/v2" } })
      assert.strictEqual(moved.origin, "https://dash.example.org")
      assert.isNull(moved.consentedAt)
      assert.notStrictEqual(moved.storageScope, samePlace.storageScope)
      const after = yield* owner.agent.apps.get({ params: { id: app.id } })
      assert.isNull(after.consentedAt)
      assert.notStrictEqual(after.storageScope, before.storageScope)

      // Clearing the optional fields; moving onto another app's origin + path is a conflict.
      const cleared = yield* member.agent.apps.update({ params: { id: app.id }, payload: { iconUrl: null, projectId: null } })
      assert.isNull(cleared.iconUrl)
      assert.isNull(cleared.projectName)
      yield* member.agent.apps.create({ payload: { name: "Other", url: "https://other.example.test/x" } })
      const taken = yield* Effect.flip(member.agent.apps.update({ params: { id: app.id }, payload: { url: "https://other.example.test/x?y" } }))
      assert.strictEqual(taken._tag, "Conflict")
    }))

  it.effect("consent, preferences and revoke are each viewer's own", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedAppRoles
      const app = yield* member.agent.apps.create({ payload: { name: "Shared", url: "https://shared.example.test/" } })
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })

      const prefs = yield* owner.app.apps.preferences({ params: { id: app.id }, payload: { shareName: true } })
      assert.isTrue(prefs.shareName)
      assert.isFalse(prefs.shareEmail)
      const both = yield* owner.app.apps.preferences({ params: { id: app.id }, payload: { shareEmail: true } })
      assert.isTrue(both.shareName)
      assert.isTrue(both.shareEmail)
      const mine = yield* member.agent.apps.get({ params: { id: app.id } })
      assert.isFalse(mine.shareName)
      assert.isFalse(mine.shareEmail)

      const ownerConsent = yield* owner.app.apps.consent({ params: { id: app.id } })
      assert.isNotNull(ownerConsent.consentedAt)
      assert.isTrue(ownerConsent.shareName, "consent keeps the preferences")
      yield* member.app.apps.consent({ params: { id: app.id } })
      const revoked = yield* member.agent.apps.revoke({ params: { id: app.id } })
      assert.isNull(revoked.consentedAt)
      assert.isNotNull((yield* owner.agent.apps.get({ params: { id: app.id } })).consentedAt)
      // Revoking on an app never consented to is harmless.
      assert.isNull((yield* member.agent.apps.revoke({ params: { id: app.id } })).consentedAt)
    }))

  it.effect("DELETE removes the app with its viewers' rows; others no longer see it", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedAppRoles
      const app = yield* member.agent.apps.create({ payload: { name: "Gone", url: "https://gone.example.test/" } })
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      yield* owner.app.apps.consent({ params: { id: app.id } })
      yield* member.agent.apps.remove({ params: { id: app.id } })
      assert.strictEqual((yield* Effect.flip(member.agent.apps.get({ params: { id: app.id } })))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(owner.app.apps.consent({ params: { id: app.id } })))._tag, "NotFound")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM app_viewers WHERE app_id = ${app.id}`
      assert.strictEqual(rows[0]!.n, 0)
      // Registering the URL again is a new app.
      const fresh = yield* member.agent.apps.create({ payload: { name: "Back", url: "https://gone.example.test/" } })
      assert.notStrictEqual(fresh.id, app.id)
    }))

  it.effect("storageScope differs per viewer and changes when the viewer leaves and rejoins the team", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedAppRoles
      const app = yield* member.agent.apps.create({ payload: { name: "Scoped", url: "https://scoped.example.test/" } })
      const personal = app.storageScope
      const shared = yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      assert.notStrictEqual(shared.storageScope, personal, "moving into a team is another membership")
      const ownerView = yield* owner.agent.apps.get({ params: { id: app.id } })
      assert.notStrictEqual(ownerView.storageScope, shared.storageScope)
      assert.strictEqual((yield* owner.agent.apps.get({ params: { id: app.id } })).storageScope, ownerView.storageScope, "stable")

      // A member leaves and joins again: a new membership generation.
      const sql = yield* SqlClient.SqlClient
      const other = yield* withClients(yield* makePerson("rejoin"))
      yield* sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${teamId}, ${other.id}, 'member')`
      const firstTime = yield* other.agent.apps.get({ params: { id: app.id } })
      yield* sql`DELETE FROM team_members WHERE team_id = ${teamId} AND user_id = ${other.id}`
      assert.strictEqual((yield* Effect.flip(other.agent.apps.get({ params: { id: app.id } })))._tag, "NotFound")
      yield* sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${teamId}, ${other.id}, 'member')`
      const secondTime = yield* other.agent.apps.get({ params: { id: app.id } })
      assert.notStrictEqual(secondTime.storageScope, firstTime.storageScope)
      // Another team of the same people does not change this app's scope.
      yield* seedTeam({ owner: other, members: [] })
      assert.strictEqual((yield* other.agent.apps.get({ params: { id: app.id } })).storageScope, secondTime.storageScope)
    }))
})

