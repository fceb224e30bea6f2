/**
 * Set-up for dead-man's switch tests: "time passes" for a watched service
 * (its start and last delivery moved back past period + grace, and its
 * stored `Check` timers made due now, so the real cluster delivers the real
 * persisted message: no sleep), the stored timers, and the watch pushes the
 * sandbox delivered to a phone.
 */
import type { SandboxDelivery } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** The service went quiet `seconds` ago (more than period + grace): its watch's times move back, its timers come due. */
export const timePasses = (serviceId: string, seconds: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE service_watches SET started_at = started_at - make_interval(secs => ${seconds}),
                 last_delivery_at = last_delivery_at - make_interval(secs => ${seconds})
               WHERE service_id = ${serviceId}`
    yield* timersComeDue(serviceId)
  }).pipe(Effect.orDie)

/** The stored timers not yet processed come due now (the clock did not move: a check finds the watch as it is). */
export const timersComeDue = (serviceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE cluster_messages SET deliver_at = ${Date.now()}
        WHERE entity_type = 'DeliveryWatch' AND entity_id = ${serviceId} AND NOT processed`).pipe(Effect.orDie)

/** The stored `Check` timers of a watch: key → due time and whether processed. */
export const watchTimers = (serviceId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ payload: string; deliverAt: string; processed: boolean }>`
      SELECT payload, deliver_at, processed FROM cluster_messages WHERE entity_type = 'DeliveryWatch' AND entity_id = ${serviceId}`
    return new Map(rows.map((r) => [JSON.parse(r.payload).key as string, { due: Number(r.deliverAt), processed: r.processed }]))
  }).pipe(Effect.orDie)

/** Whether every stored timer of the watch has been processed (none left to run). */
export const allProcessed = (timers: ReadonlyMap<string, { readonly processed: boolean }>) =>
  timers.size > 0 && [...timers.values()].every((t) => t.processed)

const alertOf = (d: SandboxDelivery) =>
  (d.payload as { aps?: { alert?: { title: string; body: string } } }).aps?.alert
const heraldOf = (d: SandboxDelivery) => (d.payload as { herald?: Record<string, string> }).herald ?? {}

/** The bodies of the watch pushes of `serviceId` among deliveries, oldest first. */
export const watchPushes = (items: ReadonlyArray<SandboxDelivery>, serviceId: string) =>
  items.filter((d) => d.pushType === "alert" && heraldOf(d).ref === `service:${serviceId}`).map((d) => alertOf(d)?.body ?? "")
