/**
 * The console's team, invite and on-call reads in the Person API: teams and
 * their members, invites by the role rules, the join link's preview before
 * accepting it, leaving; who is on call and the open pages a person can act
 * on, with the page's acknowledgement reaching the paged person's open inbox
 * stream. Another person's team or an unknown code answers 404.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { eventually } from "../../../../test/support/eventually.ts"
import { makePerson, personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { phoneOf, seedGroup } from "../oncall/pagesSupport.ts"
import { openStream } from "../../../../test/support/inboxStream.ts"

const tagOf = <A, E extends { readonly _tag: string }, R>(call: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.result(call), (r) => r._tag === "Success" ? "ok" : r.failure._tag)

const preview = (session: string, code: string) =>
  rawFetch(`/api/app/invites/${encodeURIComponent(code)}`, { headers: { authorization: `Bearer ${session}` } })

layer(TestServerLayer, { timeout: "180 seconds", excludeTestServices: true })("person teams", (it) => {
  it.effect("teams and members; invites by role; the invite link's preview; revoke; leave; a stranger's team is 404", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles("family")
      const [ownerApp, adminApp, memberApp, outsiderApp] = yield* Effect.all([
        personClient(owner.session),
        personClient(admin.session),
        personClient(member.session),
        personClient(outsider.session)
      ])

      const listed = (yield* memberApp.teams.list()).items
      assert.deepStrictEqual(listed.map((t) => [t.id, t.role]), [[teamId, "member"]])
      const detail = yield* memberApp.teams.get({ params: { id: teamId } })
      assert.deepStrictEqual(detail.members.map((m) => [m.userId, m.role]), [
        [owner.person.id, "owner"],
        [admin.person.id, "admin"],
        [member.person.id, "member"]
      ])
      assert.deepStrictEqual((yield* outsiderApp.teams.list()).items, [])
      assert.strictEqual(yield* tagOf(outsiderApp.teams.get({ params: { id: teamId } })), "NotFound")
      assert.strictEqual(yield* tagOf(outsiderApp.teams.invites({ params: { id: teamId } })), "NotFound")

      // Admins invite members, only the owner invites admins; a member invites nobody.
      assert.strictEqual(yield* tagOf(memberApp.teams.invites({ params: { id: teamId } })), "Forbidden")
      assert.strictEqual(yield* tagOf(memberApp.teams.invite({ params: { id: teamId }, payload: { email: "x@example.test" } })), "Forbidden")
      assert.strictEqual(
        yield* tagOf(adminApp.teams.invite({ params: { id: teamId }, payload: { email: "x@example.test", role: "admin" } })),
        "Forbidden"
      )
      const created = yield* adminApp.teams.invite({ params: { id: teamId }, payload: { email: "New.Person@Example.test" } })
      assert.match(created.url, new RegExp(`/join/${created.code}$`))
      assert.strictEqual(created.invite.email, "new.person@example.test")
      // The family is full: owner, admin, member and the pending invite.
      assert.strictEqual(yield* tagOf(ownerApp.teams.invite({ params: { id: teamId }, payload: { domain: "example.test" } })), "LimitReached")
      const invites = yield* ownerApp.teams.invites({ params: { id: teamId } })
      assert.deepStrictEqual(invites.items.map((i) => i.id), [created.invite.id])
      assert.notProperty(invites.items[0]!, "code")

      // The preview: what the link leads to, for anyone signed in, before accepting.
      const seen = yield* preview(outsider.session, created.code)
      assert.strictEqual(seen.status, 200)
      const { expiresAt, ...rest } = seen.body as { expiresAt: string }
      assert.deepStrictEqual(rest, {
        teamName: "Test team",
        kind: "family",
        role: "member",
        invitedBy: "admin",
        email: "new.person@example.test",
        domain: null,
        alreadyMember: false
      })
      assert.strictEqual(expiresAt, created.invite.expiresAt)
      assert.isTrue(((yield* preview(member.session, created.code)).body as { alreadyMember: boolean }).alreadyMember)
      assert.strictEqual((yield* preview("hls_not_a_session", created.code)).status, 401)

      // Revoked: its preview is the same 404 as an unknown code's; its seat is free again.
      const revoked = yield* ownerApp.teams.revokeInvite({ params: { id: teamId, inviteId: created.invite.id } })
      assert.isNotNull(revoked.revokedAt)
      const gone = yield* preview(outsider.session, created.code)
      const unknown = yield* preview(outsider.session, "no-such-code")
      assert.strictEqual(gone.status, 404)
      assert.deepStrictEqual(gone.body, unknown.body)
      assert.strictEqual(yield* tagOf(ownerApp.teams.invite({ params: { id: teamId }, payload: { domain: "example.test" } })), "ok")

      // Leaving: the owner must hand over first; a member just goes.
      assert.strictEqual(yield* tagOf(ownerApp.teams.leave({ params: { id: teamId } })), "Conflict")
      yield* memberApp.teams.leave({ params: { id: teamId } })
      assert.deepStrictEqual((yield* memberApp.teams.list()).items, [])
      assert.strictEqual(yield* tagOf(memberApp.teams.get({ params: { id: teamId } })), "NotFound")
    }))

  it.effect("the person an invite names previews it, accepts it, and the code then answers 404", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const invitee = yield* makePerson("invitee")
      const ownerApp = yield* personClient(owner.session)
      const inviteeApp = yield* personClient(invitee.session)
      const created = yield* ownerApp.teams.invite({ params: { id: teamId }, payload: { email: invitee.person.email, role: "admin" } })
      const seen = yield* preview(invitee.session, created.code)
      assert.strictEqual((seen.body as { kind: string }).kind, "team")
      assert.strictEqual((seen.body as { role: string }).role, "admin")
      const joined = yield* inviteeApp.invites.accept({ payload: { code: created.code } })
      assert.strictEqual(joined.id, teamId)
      assert.strictEqual(joined.role, "admin")
      assert.strictEqual((yield* preview(invitee.session, created.code)).status, 404)
    }))

  it.effect("who is on call, the open pages of my teams, and a page acknowledged reaching the paged person's stream", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles("team")
      const groupId = yield* seedGroup(teamId, [member, admin], [{ afterMinutes: 30, target: "next" }])
      yield* phoneOf(member)
      const [memberApp, adminApp, outsiderApp] = yield* Effect.all([personClient(member.session), personClient(admin.session), personClient(outsider.session)])
      const stream = yield* openStream(member.session)
      yield* eventually(Effect.sync(() => stream.frames.length), (n) => n > 0)

      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])
      const { page } = yield* agent.pages.create({ params: { groupId }, payload: { title: "Disk full" } })
      const ref = `page:${page.id}`
      yield* eventually(Effect.sync(() => stream.items()), (items) => items.includes(ref))

      const oncall = yield* memberApp.oncall.get()
      assert.deepStrictEqual(oncall.groups.map((g) => [g.id, g.teamId, g.teamName]), [[groupId, teamId, "Test team"]])
      assert.strictEqual(oncall.groups[0]!.current?.person.userId, member.person.id)
      assert.strictEqual(oncall.groups[0]!.upcoming[0]?.person.userId, admin.person.id)
      assert.isTrue(oncall.shifts.length > 0)
      assert.isTrue(oncall.shifts.every((s) => s.shift.person.userId === member.person.id && s.group.id === groupId))
      assert.deepStrictEqual(oncall.pages.map((p) => p.id), [page.id])
      // The admin was not paged: the group is theirs to see, the page is not in their list of pages that paged them.
      const adminView = yield* adminApp.oncall.get()
      assert.deepStrictEqual(adminView.pages, [])
      assert.deepStrictEqual((yield* outsiderApp.oncall.get()).groups, [])

      // Open pages of my teams: any member may act on them, paged or not.
      assert.deepStrictEqual((yield* adminApp.pages.list()).items.map((p) => p.id), [page.id])
      assert.deepStrictEqual((yield* adminApp.pages.list({ query: { status: "acknowledged" } })).items, [])
      assert.deepStrictEqual((yield* outsiderApp.pages.list()).items, [])
      assert.strictEqual(yield* tagOf(outsiderApp.pages.acknowledge({ params: { id: page.id } })), "NotFound")

      const acknowledged = yield* adminApp.pages.acknowledge({ params: { id: page.id } })
      assert.strictEqual(acknowledged.status, "acknowledged")
      // The paged person's inbox shows the page taken, without a reload.
      yield* eventually(Effect.sync(() => stream.items().filter((id) => id === ref).length), (n) => n === 2)
      assert.strictEqual((yield* memberApp.inbox.get({ params: { id: ref } })).status, "acknowledged")
      assert.deepStrictEqual((yield* memberApp.pages.list({ query: { status: "acknowledged" } })).items.map((p) => p.id), [page.id])
      assert.deepStrictEqual((yield* memberApp.pages.list({ query: { status: "triggered" } })).items, [])
      const query = yield* rawFetch("/api/app/pages?status=resolved", { headers: { authorization: `Bearer ${member.session}` } })
      assert.strictEqual(query.status, 400)
    }))
})
