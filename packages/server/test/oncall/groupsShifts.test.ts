/**
 * The shifts GET shows for on-call groups: a UTC rotation that started in the
 * past (owners and times exactly), Europe/Berlin by its local wall clock, a
 * future Berlin rotation across the March DST change, an override covering
 * now, and GET /oncall/me across the caller's teams with the open pages that
 * notified them.
 */
import { assert, layer } from "@effect/vitest"
import type { OncallGroup, OncallShift } from "@herald/api"
import { Effect } from "effect"
import { seedRoles, seedTeam } from "../../../../test/support/teams.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { auditOf, clientOf, DAY, daysBetween, HOUR, iso, local, nowSeconds, ownerOf, rotationBody, sqlRows } from "./groupsSupport.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("on-call shifts", (it) => {
  it.effect("a UTC rotation that started in the past: current and the next 5 owners and times", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(owner)
      const members = [owner, admin, member]
      const now = Date.now()
      // 09:00 UTC ten days before today.
      const start = Math.floor(now / DAY) * DAY - 10 * DAY + 9 * HOUR
      const group = yield* client.oncall.create({
        params: { id: teamId },
        payload: { name: "UTC", rotation: rotationBody(members, { startsAt: iso(start) }) }
      })
      const read = yield* client.oncall.get({ params: { groupId: group.id } })
      const at = Date.now()
      const k = Math.floor((at - start) / DAY)
      const expect = (i: number) => ({ userId: members[i % 3]!.person.id, startsAt: iso(start + i * DAY), endsAt: iso(start + (i + 1) * DAY) })
      const shape = (s: OncallShift | null | undefined) =>
        s == null ? s : { userId: s.person.userId, startsAt: s.startsAt, endsAt: s.endsAt }
      assert.deepStrictEqual(shape(read.current), expect(k))
      assert.strictEqual(read.current!.override, false)
      assert.deepStrictEqual(read.upcoming.map(shape), [1, 2, 3, 4, 5].map((i) => expect(k + i)))
      assert.strictEqual(read.current!.person.name, ["owner", "admin", "member"][k % 3])
    }))

  it.effect("a Europe/Berlin rotation that started in the past hands off at 09:00 local time every day, in turn", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(owner)
      const members = [owner, admin, member]
      const zone = "Europe/Berlin"
      // 09:00 Berlin time 40 days ago (whichever of UTC+1/UTC+2 holds then): long enough to cross a DST change half the year.
      const day = Math.floor(Date.now() / DAY) * DAY - 40 * DAY
      const start = [7, 8].map((h) => day + h * HOUR).find((ms) => local(ms, zone).time === "09:00")!
      const startDate = local(start, zone).date
      const group = yield* client.oncall.create({
        params: { id: teamId },
        payload: { name: "Berlin", rotation: rotationBody(members, { timezone: zone, startsAt: iso(start) }) }
      })
      const read = yield* client.oncall.get({ params: { groupId: group.id } })
      const at = Date.now()
      const current = read.current!
      assert.isTrue(Date.parse(current.startsAt) <= at && at < Date.parse(current.endsAt))
      const shifts = [current, ...read.upcoming]
      assert.strictEqual(shifts.length, 6)
      shifts.forEach((shift, i) => {
        const begins = local(Date.parse(shift.startsAt), zone)
        assert.strictEqual(begins.time, "09:00", shift.startsAt)
        assert.strictEqual(local(Date.parse(shift.endsAt), zone).time, "09:00", shift.endsAt)
        assert.strictEqual(ownerOf(shift), members[daysBetween(startDate, begins.date) % 3]!.person.id, shift.startsAt)
        assert.include([23 * HOUR, 24 * HOUR, 25 * HOUR], Date.parse(shift.endsAt) - Date.parse(shift.startsAt))
        if (i > 0) assert.strictEqual(shift.startsAt, shifts[i - 1]!.endsAt)
      })
    }))

  it.effect("a Berlin rotation starting in the future: no one is on call yet; the March DST day still hands off at 09:00", () =>
    Effect.gen(function*() {
      const { admin, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(owner)
      // Friday 26 March 2027, 09:00 CET; clocks go forward on Sunday the 28th.
      const group = yield* client.oncall.create({
        params: { id: teamId },
        payload: {
          name: "Future",
          rotation: rotationBody([owner, admin], { timezone: "Europe/Berlin", startsAt: "2027-03-26T08:00:00Z" })
        }
      })
      assert.isNull(group.current)
      assert.deepStrictEqual(group.upcoming.map((s) => [ownerOf(s), s.startsAt, s.endsAt]), [
        [owner.person.id, "2027-03-26T08:00:00.000Z", "2027-03-27T08:00:00.000Z"],
        [admin.person.id, "2027-03-27T08:00:00.000Z", "2027-03-28T07:00:00.000Z"],
        [owner.person.id, "2027-03-28T07:00:00.000Z", "2027-03-29T07:00:00.000Z"],
        [admin.person.id, "2027-03-29T07:00:00.000Z", "2027-03-30T07:00:00.000Z"],
        [owner.person.id, "2027-03-30T07:00:00.000Z", "2027-03-31T07:00:00.000Z"]
      ])
    }))

  it.effect("an override covering now is `current`; the rotation resumes when it ends; removing it restores the rotation", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const adminClient = yield* clientOf(admin)
      const memberClient = yield* clientOf(member)
      const group = yield* adminClient.oncall.create({
        params: { id: teamId },
        payload: { name: "G", rotation: rotationBody([owner, admin]) }
      })
      const before = yield* adminClient.oncall.get({ params: { groupId: group.id } })
      const now = nowSeconds()
      const window = { startsAt: iso(now - HOUR), endsAt: iso(now + 2 * HOUR) }
      // A member puts themselves on call (a window that began an hour ago is fine: it is not over).
      const created = yield* memberClient.oncall.createOverride({
        params: { groupId: group.id },
        payload: { userId: member.person.id, ...window }
      })
      assert.match(created.id, /^ovr_/)
      assert.deepStrictEqual({ ...created, person: { ...created.person } }, {
        id: created.id,
        person: { userId: member.person.id, name: "member", image: null },
        startsAt: iso(now - HOUR),
        endsAt: iso(now + 2 * HOUR)
      })
      const read = yield* adminClient.oncall.get({ params: { groupId: group.id } })
      assert.strictEqual(ownerOf(read.current), member.person.id)
      assert.strictEqual(read.current!.override, true)
      assert.strictEqual(read.current!.overrideId, created.id)
      assert.strictEqual(read.current!.startsAt, window.startsAt)
      assert.strictEqual(read.current!.endsAt, window.endsAt)
      assert.strictEqual(read.upcoming[0]!.startsAt, window.endsAt)
      assert.strictEqual(read.upcoming[0]!.override, false)
      assert.deepStrictEqual(read.overrides.map((o) => o.id), [created.id])

      yield* memberClient.oncall.removeOverride({ params: { groupId: group.id, overrideId: created.id } })
      const after = yield* adminClient.oncall.get({ params: { groupId: group.id } })
      assert.deepStrictEqual(after.overrides, [])
      assert.strictEqual(ownerOf(after.current), ownerOf(before.current))
      assert.strictEqual(after.current!.override, false)
      const missing = yield* Effect.flip(memberClient.oncall.removeOverride({ params: { groupId: group.id, overrideId: created.id } }))
      assert.strictEqual(missing._tag, "NotFound")
      assert.strictEqual((missing as { error: string }).error, "Override not found.")

      const audit = (yield* auditOf(teamId)).filter((a) => a.targetId === created.id)
      assert.deepStrictEqual(audit.map((a) => [a.action, a.actorUserId, a.targetType]), [
        ["oncall.override_created", member.person.id, "oncall_override"],
        ["oncall.override_deleted", member.person.id, "oncall_override"]
      ])
      assert.deepStrictEqual(audit[0]!.metadata, { groupId: group.id, userId: member.person.id, ...window })
    }))

  it.effect("GET /oncall/me: the caller's shifts across their teams, soonest first, and the open pages that notified them", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const other = yield* makePerson("other")
      const second = yield* seedTeam({ owner: other, members: [{ person: member, role: "member" }] })
      const adminClient = yield* clientOf(admin)
      const otherClient = yield* clientOf(other)
      const start = Math.floor(Date.now() / DAY) * DAY - 3 * DAY + 9 * HOUR
      const first: OncallGroup = yield* adminClient.oncall.create({
        params: { id: teamId },
        payload: { name: "First", rotation: rotationBody([owner, member], { startsAt: iso(start) }) }
      })
      const weekly: OncallGroup = yield* otherClient.oncall.create({
        params: { id: second.teamId },
        payload: { name: "Weekly", rotation: rotationBody([member, other], { period: "weekly", startsAt: iso(start) }) }
      })
      // A group without the member: none of its shifts are theirs.
      yield* adminClient.oncall.create({ params: { id: teamId }, payload: { name: "Not mine", rotation: rotationBody([admin]) } })

      const mine = yield* (yield* clientOf(member)).oncall.me()
      const byGroup = (id: string) => mine.shifts.filter((s) => s.group.id === id)
      assert.strictEqual(byGroup(first.id).length, 5)
      assert.strictEqual(byGroup(weekly.id).length, 5)
      assert.strictEqual(mine.shifts.length, 10)
      for (const s of mine.shifts) assert.strictEqual(s.shift.person.userId, member.person.id)
      assert.deepStrictEqual({ ...byGroup(weekly.id)[0]!.group }, { id: weekly.id, name: "Weekly", teamId: second.teamId })
      const starts = mine.shifts.map((s) => Date.parse(s.shift.startsAt))
      assert.deepStrictEqual(starts, [...starts].sort((a, b) => a - b))
      // Daily, two members: the member's shifts are every other day.
      const daily = byGroup(first.id).map((s) => Date.parse(s.shift.startsAt))
      for (let i = 1; i < daily.length; i++) assert.strictEqual(daily[i]! - daily[i - 1]!, 2 * DAY)
      assert.deepStrictEqual(mine.pages, [])

      // An open page that notified the member shows; a resolved one does not.
      const open = yield* makeId("page")
      const resolved = yield* makeId("page")
      yield* sqlRows((sql) =>
        sql`INSERT INTO pages (id, team_id, group_id, group_name, title, status) VALUES
              (${open}, ${teamId}, ${first.id}, 'First', 'Disk full', 'triggered'),
              (${resolved}, ${teamId}, ${first.id}, 'First', 'Old', 'resolved')`)
      yield* sqlRows((sql) =>
        sql`INSERT INTO page_notified (page_id, user_id, step) VALUES (${open}, ${member.person.id}, 0), (${resolved}, ${member.person.id}, 0)`)
      const withPages = yield* (yield* clientOf(member)).oncall.me()
      assert.deepStrictEqual(withPages.pages.map((p) => [p.id, p.title, p.status]), [[open, "Disk full", "triggered"]])

      const nobody = yield* (yield* clientOf(outsider)).oncall.me()
      assert.deepStrictEqual(nobody.shifts, [])
      assert.deepStrictEqual(nobody.pages, [])
    }))
})
