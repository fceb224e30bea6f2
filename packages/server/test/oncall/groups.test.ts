/**
 * On-call groups over HTTP with the typed client: the record and its audit
 * entry, every validation rule and limit of groups and overrides, PATCH and
 * DELETE (pages keep their history), a person leaving dropping out of
 * rotations and overrides, `openPageCount` and `oncallGroupCount`. The shifts
 * GET shows are in groupsShifts.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { seedRoles } from "../../../../test/support/teams.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import { ONCALL_MAX_GROUPS, ONCALL_MAX_OVERRIDES } from "../../src/config/Limits.ts"
import { makeId } from "../../src/lib/Ids.ts"
import {
  auditOf,
  clientOf,
  DAY,
  HOUR,
  iso,
  MEMBER_404,
  nowSeconds,
  ownerOf,
  post,
  rotationBody,
  secretOf,
  sqlRows,
  VALIDATION
} from "./groupsSupport.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("on-call groups", (it) => {
  it.effect("create answers the record; get and list read it back; one audit entry; the team counts it", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(admin)
      const created = yield* client.oncall.create({
        params: { id: teamId },
        payload: {
          name: "Primary",
          rotation: rotationBody([member, owner], { startsAt: "2026-01-01T09:00:00Z" }),
          escalation: [{ afterMinutes: 5, target: "next" }, { afterMinutes: 15, target: "group" }]
        }
      })
      assert.match(created.id, /^ocg_/)
      assert.strictEqual(created.teamId, teamId)
      assert.strictEqual(created.name, "Primary")
      assert.deepStrictEqual(created.rotation.members.map((p) => ({ ...p })), [
        { userId: member.person.id, name: "member", image: null },
        { userId: owner.person.id, name: "owner", image: null }
      ])
      assert.strictEqual(created.rotation.startsAt, "2026-01-01T09:00:00.000Z")
      assert.strictEqual(created.rotation.timezone, "UTC")
      assert.deepStrictEqual(created.escalation.map((s) => ({ ...s })), [
        { afterMinutes: 5, target: "next" },
        { afterMinutes: 15, target: "group" }
      ])
      assert.deepStrictEqual(created.overrides, [])
      assert.strictEqual(created.openPageCount, 0)
      assert.strictEqual(created.upcoming.length, 5)

      const memberClient = yield* clientOf(member)
      const read = yield* memberClient.oncall.get({ params: { groupId: created.id } })
      assert.deepStrictEqual({ ...read, current: null, upcoming: [] }, { ...created, current: null, upcoming: [] })
      const second = yield* client.oncall.create({ params: { id: teamId }, payload: { name: "Second", rotation: rotationBody([admin]) } })
      assert.deepStrictEqual(second.escalation, [])
      const listed = yield* memberClient.oncall.list({ params: { id: teamId } })
      assert.deepStrictEqual(listed.items.map((g) => g.id), [second.id, created.id])
      assert.strictEqual((yield* memberClient.teams.get({ params: { id: teamId } })).oncallGroupCount, 2)

      const audit = (yield* auditOf(teamId)).filter((a) => a.targetId === created.id)
      assert.strictEqual(audit.length, 1)
      assert.strictEqual(audit[0]!.action, "oncall.group_created")
      assert.strictEqual(audit[0]!.actorUserId, admin.person.id)
      assert.strictEqual(audit[0]!.targetType, "oncall_group")
      assert.deepStrictEqual(audit[0]!.metadata, {
        name: "Primary",
        rotation: {
          members: [member.person.id, owner.person.id],
          period: "daily",
          handoffAt: "09:00",
          timezone: "UTC",
          startsAt: "2026-01-01T09:00:00.000Z"
        },
        escalation: [{ afterMinutes: 5, target: "next" }, { afterMinutes: 15, target: "group" }]
      })
    }))

  it.effect("override rules: a window that ends after it starts, not over, at most 90 days; a member of the team; limits", () =>
    Effect.gen(function*() {
      const { admin, outsider, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(admin)
      const group = yield* client.oncall.create({ params: { id: teamId }, payload: { name: "G", rotation: rotationBody([owner]) } })
      const now = nowSeconds()
      const secret = yield* secretOf(admin)
      const cases: ReadonlyArray<readonly [{ userId: string; startsAt: string; endsAt: string }, Record<string, unknown>]> = [
        [{ userId: owner.person.id, startsAt: iso(now + 2 * HOUR), endsAt: iso(now + HOUR) }, VALIDATION],
        [{ userId: owner.person.id, startsAt: iso(now + HOUR), endsAt: iso(now + HOUR) }, VALIDATION],
        [{ userId: owner.person.id, startsAt: iso(now - 3 * HOUR), endsAt: iso(now - HOUR) }, VALIDATION],
        [{ userId: owner.person.id, startsAt: iso(now), endsAt: iso(now + 90 * DAY + 1000) }, VALIDATION],
        [{ userId: owner.person.id, startsAt: "tomorrow", endsAt: iso(now + HOUR) }, VALIDATION],
        [{ userId: outsider.person.id, startsAt: iso(now), endsAt: iso(now + HOUR) }, MEMBER_404],
        [{ userId: "usr_doesnotexist", startsAt: iso(now), endsAt: iso(now + HOUR) }, MEMBER_404]
      ]
      for (const [payload, expected] of cases) {
        const answer = yield* post(secret, `/oncall/${group.id}/overrides`, payload)
        assert.deepInclude(answer, expected, JSON.stringify(payload))
      }
      // Exactly 90 days is allowed.
      yield* client.oncall.createOverride({
        params: { groupId: group.id },
        payload: { userId: owner.person.id, startsAt: iso(now), endsAt: iso(now + 90 * DAY) }
      })
      assert.strictEqual((yield* auditOf(teamId)).filter((a) => a.action === "oncall.override_created").length, 1)

      // Past overrides do not count towards the limit; current and future ones do.
      yield* sqlRows((sql) =>
        sql`INSERT INTO oncall_overrides (id, group_id, team_id, user_id, starts_at, ends_at)
            SELECT 'ovr_past' || n, ${group.id}, ${teamId}, ${owner.person.id}, now() - interval '2 days', now() - interval '1 day'
            FROM generate_series(1, 5) n`)
      yield* sqlRows((sql) =>
        sql`INSERT INTO oncall_overrides (id, group_id, team_id, user_id, starts_at, ends_at)
            SELECT 'ovr_fill' || n, ${group.id}, ${teamId}, ${owner.person.id}, now() + interval '1 day', now() + interval '2 days'
            FROM generate_series(1, ${ONCALL_MAX_OVERRIDES - 2}) n`)
      yield* client.oncall.createOverride({
        params: { groupId: group.id },
        payload: { userId: owner.person.id, startsAt: iso(now), endsAt: iso(now + HOUR) }
      })
      const full = yield* Effect.flip(client.oncall.createOverride({
        params: { groupId: group.id },
        payload: { userId: owner.person.id, startsAt: iso(now), endsAt: iso(now + HOUR) }
      }))
      assert.strictEqual(full._tag, "LimitReached")
      assert.strictEqual((full as { limit: number }).limit, ONCALL_MAX_OVERRIDES)
    }))

  it.effect("group rules: IANA zone, distinct team members, ascending escalation within bounds; nothing written on refusal", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(owner)
      const good = rotationBody([owner, admin])
      const many = Array.from({ length: 51 }, (_, i) => `usr_fake${i}`)
      const cases: ReadonlyArray<readonly [unknown, Record<string, unknown>]> = [
        [{ rotation: { ...good, timezone: "Mars/Olympus_Mons" } }, VALIDATION],
        [{ rotation: { ...good, timezone: "+05:30" } }, VALIDATION],
        [{ rotation: { ...good, handoffAt: "24:00" } }, VALIDATION],
        [{ rotation: { ...good, handoffAt: "9:00" } }, VALIDATION],
        [{ rotation: { ...good, period: "monthly" } }, VALIDATION],
        [{ rotation: { ...good, startsAt: "soon" } }, VALIDATION],
        [{ rotation: { ...good, members: [] } }, VALIDATION],
        [{ rotation: { ...good, members: many } }, VALIDATION],
        [{ rotation: { ...good, members: [owner.person.id, admin.person.id, owner.person.id] } }, VALIDATION],
        [{ rotation: { ...good, members: [member.person.id, outsider.person.id] } }, MEMBER_404],
        [{ rotation: { ...good, members: ["usr_doesnotexist"] } }, MEMBER_404],
        [{ rotation: good, escalation: [{ afterMinutes: 10, target: "next" }, { afterMinutes: 10, target: "group" }] }, VALIDATION],
        [{ rotation: good, escalation: [{ afterMinutes: 10, target: "next" }, { afterMinutes: 5, target: "group" }] }, VALIDATION],
        [{ rotation: good, escalation: [{ afterMinutes: 0, target: "next" }] }, VALIDATION],
        [{ rotation: good, escalation: [{ afterMinutes: 1441, target: "next" }] }, VALIDATION],
        [{ rotation: good, escalation: [{ afterMinutes: 5, target: "everyone" }] }, VALIDATION],
        [{ rotation: good, escalation: Array.from({ length: 11 }, (_, i) => ({ afterMinutes: i + 1, target: "next" })) }, VALIDATION]
      ]
      const secret = yield* secretOf(owner)
      for (const [body, expected] of cases) {
        const answer = yield* post(secret, `/teams/${teamId}/oncall`, { name: "G", ...(body as object) })
        assert.deepInclude(answer, expected, JSON.stringify(body))
      }
      assert.deepStrictEqual((yield* client.oncall.list({ params: { id: teamId } })).items, [])
      assert.deepStrictEqual(yield* auditOf(teamId), [])
      // The bounds themselves are allowed.
      const edge = yield* client.oncall.create({
        params: { id: teamId },
        payload: {
          name: "Edge",
          rotation: { ...good, timezone: "Asia/Kolkata", handoffAt: "23:59" },
          escalation: Array.from({ length: 10 }, (_, i) => ({ afterMinutes: i === 9 ? 1440 : i + 1, target: "group" as const }))
        }
      })
      assert.strictEqual(edge.escalation.length, 10)
    }))

  it.effect("a team keeps at most 50 groups (422 LIMIT_REACHED)", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(owner)
      yield* sqlRows((sql) =>
        sql`INSERT INTO oncall_groups (id, team_id, name, period, handoff_at, timezone, starts_at)
            SELECT 'ocg_fill' || n || ${teamId.slice(5)}, ${teamId}, 'g' || n, 'daily', '09:00', 'UTC', now()
            FROM generate_series(1, ${ONCALL_MAX_GROUPS - 1}) n`)
      yield* client.oncall.create({ params: { id: teamId }, payload: { name: "Last", rotation: rotationBody([owner]) } })
      const full = yield* Effect.flip(client.oncall.create({ params: { id: teamId }, payload: { name: "One more", rotation: rotationBody([owner]) } }))
      assert.strictEqual(full._tag, "LimitReached")
      assert.strictEqual((full as { limit: number }).limit, ONCALL_MAX_GROUPS)
    }))

  it.effect("PATCH replaces the fields given and keeps the rest and the overrides; a refused PATCH changes nothing", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(admin)
      const group = yield* client.oncall.create({
        params: { id: teamId },
        payload: { name: "G", rotation: rotationBody([owner, admin]), escalation: [{ afterMinutes: 5, target: "next" }] }
      })
      const now = nowSeconds()
      const override = yield* client.oncall.createOverride({
        params: { groupId: group.id },
        payload: { userId: owner.person.id, startsAt: iso(now + DAY), endsAt: iso(now + 2 * DAY) }
      })
      const renamed = yield* client.oncall.update({ params: { groupId: group.id }, payload: { name: "Renamed" } })
      assert.strictEqual(renamed.name, "Renamed")
      assert.deepStrictEqual(renamed.rotation, group.rotation)
      assert.deepStrictEqual(renamed.escalation, group.escalation)
      const rotation = rotationBody([member, owner], { period: "weekly", handoffAt: "10:30", timezone: "America/New_York" })
      const changed = yield* client.oncall.update({
        params: { groupId: group.id },
        payload: { rotation, escalation: [{ afterMinutes: 3, target: "group" }] }
      })
      assert.strictEqual(changed.name, "Renamed")
      assert.deepStrictEqual(changed.rotation.members.map((p) => p.userId), [member.person.id, owner.person.id])
      assert.strictEqual(changed.rotation.period, "weekly")
      assert.strictEqual(changed.rotation.handoffAt, "10:30")
      assert.strictEqual(changed.rotation.timezone, "America/New_York")
      assert.deepStrictEqual(changed.escalation.map((s) => ({ ...s })), [{ afterMinutes: 3, target: "group" }])
      assert.deepStrictEqual(changed.overrides.map((o) => o.id), [override.id])
      assert.isTrue(Date.parse(changed.updatedAt) >= Date.parse(group.updatedAt))

      const refused = yield* Effect.flip(client.oncall.update({
        params: { groupId: group.id },
        payload: { name: "Nope", rotation: { ...rotation, members: [outsider.person.id] } }
      }))
      assert.strictEqual(refused._tag, "NotFound")
      const bad = yield* Effect.flip(client.oncall.update({ params: { groupId: group.id }, payload: { rotation: { ...rotation, timezone: "Nowhere" } } }))
      assert.strictEqual(bad._tag, "ValidationFailed")
      const kept = yield* client.oncall.get({ params: { groupId: group.id } })
      assert.strictEqual(kept.name, "Renamed")
      assert.deepStrictEqual(kept.rotation, changed.rotation)

      const audit = (yield* auditOf(teamId)).filter((a) => a.action === "oncall.group_updated")
      assert.strictEqual(audit.length, 2)
      assert.deepStrictEqual(audit[0]!.metadata, { name: "Renamed" })
      assert.deepStrictEqual(Object.keys(audit[1]!.metadata).sort(), ["escalation", "rotation"])
    }))

  it.effect("openPageCount counts unresolved pages; DELETE keeps the pages' history (group_id null, name kept)", () =>
    Effect.gen(function*() {
      const { admin, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(admin)
      const group = yield* client.oncall.create({ params: { id: teamId }, payload: { name: "Paged", rotation: rotationBody([owner]) } })
      const ids: Array<string> = []
      for (const status of ["triggered", "acknowledged", "resolved"]) {
        const id = yield* makeId("page")
        ids.push(id)
        yield* sqlRows((sql) =>
          sql`INSERT INTO pages (id, team_id, group_id, group_name, title, status) VALUES (${id}, ${teamId}, ${group.id}, 'Paged', 't', ${status})`)
      }
      assert.strictEqual((yield* client.oncall.get({ params: { groupId: group.id } })).openPageCount, 2)
      yield* client.oncall.remove({ params: { groupId: group.id } })
      assert.strictEqual((yield* Effect.flip(client.oncall.get({ params: { groupId: group.id } })))._tag, "NotFound")
      const pages = yield* sqlRows((sql) =>
        sql<{ id: string; groupId: string | null; groupName: string }>`SELECT id, group_id, group_name FROM pages WHERE ${sql.in("id", ids)} ORDER BY id`)
      // Ids made in one millisecond do not sort in creation order: compare as sorted lists.
      assert.deepStrictEqual(pages.map((p) => ({ ...p })).sort((a, b) => a.id < b.id ? -1 : 1), [...ids].sort().map((id) => ({ id, groupId: null, groupName: "Paged" })))
      assert.strictEqual((yield* client.teams.get({ params: { id: teamId } })).oncallGroupCount, 0)
      const audit = (yield* auditOf(teamId)).filter((a) => a.targetId === group.id)
      assert.deepStrictEqual(audit.map((a) => [a.action, a.metadata]), [
        ["oncall.group_created", audit[0]!.metadata],
        ["oncall.group_deleted", { name: "Paged" }]
      ])
    }))

  it.effect("a person leaving the team drops out of its rotations and overrides", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const client = yield* clientOf(admin)
      const group = yield* client.oncall.create({
        params: { id: teamId },
        payload: { name: "G", rotation: rotationBody([owner, member, admin]) }
      })
      const now = nowSeconds()
      const memberClient = yield* clientOf(member)
      yield* memberClient.oncall.createOverride({
        params: { groupId: group.id },
        payload: { userId: member.person.id, startsAt: iso(now - HOUR), endsAt: iso(now + HOUR) }
      })
      assert.strictEqual(ownerOf((yield* client.oncall.get({ params: { groupId: group.id } })).current), member.person.id)
      yield* memberClient.teams.leave({ params: { id: teamId } })
      const after = yield* client.oncall.get({ params: { groupId: group.id } })
      assert.deepStrictEqual(after.rotation.members.map((p) => p.userId), [owner.person.id, admin.person.id])
      assert.deepStrictEqual(after.overrides, [])
      const everyone = [after.current, ...after.upcoming].map(ownerOf)
      assert.notInclude(everyone, member.person.id)
      // And the group is hidden from them now.
      assert.strictEqual((yield* Effect.flip(memberClient.oncall.get({ params: { groupId: group.id } })))._tag, "NotFound")
    }))

})
