/**
 * A person's sessions (issue 32) over HTTP: the list marks the current one
 * and keeps each browser's user agent; revoking another session signs it out
 * (401 on its next request) and leaves this one; signing out revokes this one
 * and clears the cookie; another person's session answers 404 like a missing
 * one. "Last used" is written at most once a minute per session.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, personClient, TestServerLayer } from "../../../../test/support/server.ts"
import { BrowserSessions } from "../../src/auth/BrowserSessions.ts"
import { Credentials } from "../../src/auth/Credentials.ts"
import { SignInLinks } from "../../src/oauth/SignInLinks.ts"
import { attributesOf, browse, pathOf, sessionOf } from "./browser.ts"

const csrf = { "x-herald-csrf": "1" }

/** A browser signed in by a fresh link for `userId`, with this user agent: its cookie. */
const browserSignIn = (userId: string, userAgent: string) =>
  Effect.gen(function*() {
    const link = yield* (yield* SignInLinks).createForConsole(userId)
    const opened = yield* browse(pathOf(link.url), { headers: { "user-agent": userAgent } })
    assert.strictEqual(opened.status, 302)
    return sessionOf(opened.cookies)!
  })

layer(TestServerLayer, { timeout: "60 seconds", excludeTestServices: true })("sessions", (it) => {
  it.effect("the list marks the current session and shows each browser's user agent; revoking another signs it out", () =>
    Effect.gen(function*() {
      const { person, session: script } = yield* makePerson("Ada")
      const laptop = yield* browserSignIn(person.id, "Mozilla/5.0 (X11; Linux x86_64) Laptop\u00fc ")
      const phone = yield* browserSignIn(person.id, `Mozilla/5.0 (iPhone) ${"x".repeat(400)}`)

      const listed = yield* browse("/api/app/sessions", { cookie: laptop })
      assert.strictEqual(listed.status, 200)
      const items: Array<{ id: string; current: boolean; userAgent: string | null; expiresAt: string | null; createdAt: string }> = listed.body.items
      assert.strictEqual(items.length, 3)
      const current = items.filter((s) => s.current)
      assert.strictEqual(current.length, 1)
      // Only printable ASCII kept, trimmed, at most 300 characters.
      assert.strictEqual(current[0]!.userAgent, "Mozilla/5.0 (X11; Linux x86_64) Laptop")
      assert.isTrue(items.some((s) => s.userAgent !== null && s.userAgent.startsWith("Mozilla/5.0 (iPhone)") && s.userAgent.length === 300))
      // The script's session (herald admin session create) never expires; a browser's lasts 30 days.
      assert.isTrue(items.some((s) => s.expiresAt === null && s.userAgent === null))
      const laptopRow = current[0]!
      const days = (Date.parse(laptopRow.expiresAt!) - Date.parse(laptopRow.createdAt)) / 86_400_000
      assert.isTrue(Math.abs(days - 30) < 0.01, String(days))

      // From the laptop, revoke the phone: the phone is signed out, the laptop and the script are not.
      const phoneRow = items.find((s) => s.userAgent?.startsWith("Mozilla/5.0 (iPhone)"))!
      assert.strictEqual((yield* browse("/api/app/me", { cookie: phone })).status, 200)
      const revoked = yield* browse(`/api/app/sessions/${phoneRow.id}`, { method: "DELETE", cookie: laptop, headers: csrf })
      assert.deepStrictEqual([revoked.status, revoked.body, revoked.cookies], [200, { ok: true }, []])
      const phoneAfter = yield* browse("/api/app/me", { cookie: phone })
      assert.deepStrictEqual([phoneAfter.status, phoneAfter.body.code], [401, "UNAUTHORIZED"])
      assert.strictEqual((yield* browse("/api/app/me", { cookie: laptop })).status, 200)

      // Through the typed client (bearer): the script sees the two left, its own current.
      const app = yield* personClient(script)
      const fromScript = yield* app.sessions.list()
      assert.deepStrictEqual(fromScript.items.map((s) => s.current).sort(), [false, true])
      assert.isFalse(fromScript.items.some((s) => s.id === phoneRow.id))
      // Already revoked: gone.
      assert.strictEqual((yield* Effect.flip(app.sessions.revoke({ params: { id: phoneRow.id } })))._tag, "NotFound")
    }))

  it.effect("another person's session answers 404 like a missing one, and stays signed in", () =>
    Effect.gen(function*() {
      const ada = yield* makePerson("Ada2")
      const bob = yield* makePerson("Bob")
      const bobSessions = yield* (yield* personClient(bob.session)).sessions.list()
      const bobsId = bobSessions.items[0]!.id
      const adaApp = yield* personClient(ada.session)
      const foreign = yield* Effect.flip(adaApp.sessions.revoke({ params: { id: bobsId } }))
      const missing = yield* Effect.flip(adaApp.sessions.revoke({ params: { id: "ses_doesnotexist" } }))
      assert.strictEqual(foreign._tag, "NotFound")
      assert.deepStrictEqual(foreign, missing)
      assert.strictEqual((yield* browse("/api/app/me", { headers: { authorization: `Bearer ${bob.session}` } })).status, 200)
      const malformed = yield* browse("/api/app/sessions/tok_1", { method: "DELETE", headers: { authorization: `Bearer ${ada.session}` } })
      assert.deepStrictEqual([malformed.status, malformed.body.code], [400, "VALIDATION_FAILED"])
    }))

  it.effect("sign-out revokes this session and clears the cookie; revoking the current session does too", () =>
    Effect.gen(function*() {
      const { person } = yield* makePerson("Out")
      const browser = yield* browserSignIn(person.id, "Browser A")
      // Without the CSRF header a cookie cannot sign out (a page elsewhere cannot sign the person out either).
      assert.strictEqual((yield* browse("/api/app/auth/sign-out", { method: "POST", cookie: browser })).status, 403)
      const out = yield* browse("/api/app/auth/sign-out", { method: "POST", cookie: browser, headers: csrf })
      assert.deepStrictEqual([out.status, out.body], [200, { ok: true }])
      assert.strictEqual(sessionOf(out.cookies), "")
      const cleared = attributesOf(out.cookies[0]!)
      assert.includeMembers(cleared, ["path=/", "httponly", "samesite=lax", "secure", "max-age=0"])
      assert.strictEqual((yield* browse("/api/app/me", { cookie: browser })).status, 401)

      const other = yield* browserSignIn(person.id, "Browser B")
      const mine = (yield* browse("/api/app/sessions", { cookie: other })).body.items.find((s: { current: boolean }) => s.current)
      const self = yield* browse(`/api/app/sessions/${mine.id}`, { method: "DELETE", cookie: other, headers: csrf })
      assert.strictEqual(self.status, 200)
      assert.strictEqual(sessionOf(self.cookies), "")
      assert.strictEqual((yield* browse("/api/app/me", { cookie: other })).status, 401)
    }))

  it.effect("last used: kept in memory, written at most once a minute per session, shown at its freshest", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const credentials = yield* Credentials
      const { person } = yield* makePerson("Used")
      const browser = yield* browserSignIn(person.id, "Browser C")
      const opened = yield* (yield* BrowserSessions).list(person.id, "")
      const id = opened.items.find((s) => s.userAgent === "Browser C")!.id
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* browse("/api/app/me", { cookie: browser })).status, 200)
      // Nothing written yet (the flush runs every 10 s), yet the list shows the use.
      const [stored] = yield* sql<{ lastUsedAt: string | null }>`SELECT last_used_at FROM sessions WHERE id = ${id}`
      const listed = (yield* browse("/api/app/sessions", { cookie: browser })).body.items.find((s: { id: string }) => s.id === id)
      assert.isNotNull(listed.lastUsedAt)
      yield* credentials.flush
      const [written] = yield* sql<{ lastUsedAt: string | null }>`SELECT last_used_at FROM sessions WHERE id = ${id}`
      assert.isNotNull(written!.lastUsedAt)
      assert.isTrue(stored!.lastUsedAt === null || Date.parse(written!.lastUsedAt!) >= Date.parse(stored!.lastUsedAt))
      // Used again within the minute: the due-flush writes nothing more for it.
      assert.strictEqual((yield* browse("/api/app/me", { cookie: browser })).status, 200)
      yield* credentials.flushDue
      const [again] = yield* sql<{ lastUsedAt: string | null }>`SELECT last_used_at FROM sessions WHERE id = ${id}`
      assert.strictEqual(again!.lastUsedAt, written!.lastUsedAt)
    }))
})
