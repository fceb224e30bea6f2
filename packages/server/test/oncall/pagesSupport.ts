/**
 * Set-up for page tests: an on-call group written straight to the database
 * (as `seedTeam` writes teams), phones for the people paged, what the sandbox
 * delivered to them, and "time passes" for a step's stored timer: its due
 * time is moved to now in the cluster's message table, so the real cluster
 * delivers the real persisted message (no sleep for minutes).
 */
import type { SandboxDelivery } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeId } from "../../src/lib/Ids.ts"
import { personClient } from "../../../../test/support/server.ts"
import type { Someone } from "../../../../test/support/teams.ts"

export interface Step {
  readonly afterMinutes: number
  readonly target: "next" | "group"
}

/**
 * A weekly group whose first shift began an hour ago: `members[0]` is on call
 * (for days), `members[1]` is the `next` escalation target.
 */
export const seedGroup = (
  teamId: string,
  members: ReadonlyArray<Someone>,
  escalation: ReadonlyArray<Step> = [],
  rotation: { readonly period?: "daily" | "weekly"; readonly handoffAt?: string; readonly startsAt?: string } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = yield* makeId("ocg")
    const startsAt = rotation.startsAt ?? new Date(Date.now() - 3_600_000).toISOString()
    // By default the hand-off is at the start's own time of day (UTC): the first shift, the first
    // member's, then lasts a whole period whatever the time of day the test runs at. (A fixed 09:00
    // handed off to the second member between 09:00 and 10:00 UTC.)
    const handoffAt = rotation.handoffAt ?? startsAt.slice(11, 16)
    yield* sql`INSERT INTO oncall_groups (id, team_id, name, period, handoff_at, timezone, starts_at, escalation)
               VALUES (${id}, ${teamId}, 'Primary', ${rotation.period ?? "weekly"}, ${handoffAt}, 'UTC',
                       ${startsAt}, ${JSON.stringify(escalation)}::jsonb)`
    for (const [position, m] of members.entries()) {
      yield* sql`INSERT INTO oncall_group_members (group_id, position, team_id, user_id)
                 VALUES (${id}, ${position}, ${teamId}, ${m.person.id})`
    }
    return id
  }).pipe(Effect.orDie)

/** An iOS phone of the person (the sandbox records the APNs payload). */
export const phoneOf = (someone: Someone) =>
  Effect.gen(function*() {
    const app = yield* personClient(someone.session)
    const device = yield* app.devices.register({ payload: { platform: "ios", pushToken: `page-${someone.person.id}-${Date.now()}` } })
    return device.id
  }).pipe(Effect.orDie)

/** What the sandbox delivered to the person's device, oldest first. */
export const deliveries = (someone: Someone, deviceId: string) =>
  Effect.flatMap(personClient(someone.session), (app) => app.devices.deliveries({ params: { id: deviceId } })).pipe(
    Effect.map((d) => d.items),
    Effect.orDie
  )

const herald = (d: SandboxDelivery) => (d.payload as { herald?: Record<string, string> }).herald ?? {}
/** Alerts of page `pageId` among deliveries. */
export const alertsOf = (items: ReadonlyArray<SandboxDelivery>, pageId: string) =>
  items.filter((d) => d.pushType === "alert" && herald(d).pageId === pageId)
/** Removal commands of page `pageId` among deliveries. */
export const withdrawalsOf = (items: ReadonlyArray<SandboxDelivery>, pageId: string) =>
  items.filter((d) => d.pushType === "background" && herald(d).withdraw === pageId)

/** The stored step timers of a page: key → due time (epoch ms). */
export const stepTimers = (pageId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ payload: string; deliverAt: string; processed: boolean }>`
      SELECT payload, deliver_at, processed FROM cluster_messages WHERE entity_type = 'Page' AND entity_id = ${pageId} AND tag = 'Step'`
    return new Map(rows.map((r) => [JSON.parse(r.payload).key as string, { due: Number(r.deliverAt), processed: r.processed }]))
  }).pipe(Effect.orDie)

/** Time reaches step `step`'s due time: its stored timer becomes due now. */
export const stepComesDue = (pageId: string, step: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE cluster_messages SET deliver_at = ${Date.now()}
               WHERE entity_type = 'Page' AND entity_id = ${pageId} AND tag = 'Step' AND payload LIKE ${`%"step-${step}"%`}`
  }).pipe(Effect.orDie)
