/**
 * The stack's floor under the live-activities bench (`PATCH
 * /api/agent/activities/{id}`, 200 activities on two devices each): the least
 * work a durable, paced queue of snapshots asks for, on the stack Herald must
 * be built on (a bare Effect `HttpApi` server, `@effect/sql-pg`, Effect's
 * request batching). Per update: the props merged in memory (the activity's
 * last state kept, as Herald's actor keeps it, one update of an activity at a
 * time), the push built and its size checked, and one guarded write shared by
 * concurrent updates (the activity's row, and each device's unsent snapshot
 * replaced in place or queued); per activity at most one send a second to
 * each device, shared by concurrent sends: claim, record at the sandbox, mark
 * accepted. No authentication, actor system, logging, metrics, readiness,
 * milestones or record read: what remains is the stack's own cost of that
 * work. Every 5 s it prints its event-loop delay p99, its time paused for
 * garbage collection and its longest pause (`eld <ms> <ms> <ms>`), measured
 * as Herald measures its own.
 *
 * argv: databaseUrl port activities; prints the port, then serves activities
 * `fa_0` … `fa_{n-1}`.
 */
import { Clock, Duration, Effect, Layer, Schema, Semaphore } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiError, HttpApiGroup } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { liveActivityMessage } from "../../packages/server/src/activities/Cards.ts"
import { batched } from "../../packages/server/src/db/Batching.ts"
import { PAYLOAD_LIMIT, payloadBytes } from "../../packages/server/src/push/PushMessage.ts"
import type { PushMessage } from "../../packages/server/src/push/PushMessage.ts"
import { bareServer, databaseFloorArgs, runPrintingPort } from "./bareServer.ts"

const Props = Schema.Record(Schema.String, Schema.Unknown)

const Api = HttpApi.make("floor").add(
  HttpApiGroup.make("activities").add(
    HttpApiEndpoint.patch("update", "/api/agent/activities/:id", {
      params: { id: Schema.String },
      payload: Schema.Struct({ props: Props }),
      success: Schema.Struct({
        activity: Schema.Struct({ id: Schema.String, props: Props, sequence: Schema.Number }),
        superseded: Schema.Number,
        queued: Schema.Number
      }),
      error: [HttpApiError.NotFound, HttpApiError.BadRequest]
    })
  )
)

const setup = (activities: number) => [
  "DROP TABLE IF EXISTS fa_deliveries, fa_operations, fa_targets, fa_activities",
  "CREATE TABLE fa_activities (id text PRIMARY KEY, props jsonb NOT NULL, sequence int NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())",
  "CREATE TABLE fa_targets (activity_id text NOT NULL, device_id text NOT NULL, token text NOT NULL, PRIMARY KEY (activity_id, device_id))",
  `CREATE TABLE fa_operations (
    id text PRIMARY KEY, activity_id text NOT NULL, device_id text NOT NULL, seq int NOT NULL, payload jsonb NOT NULL,
    status text NOT NULL DEFAULT 'queued', created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz)`,
  "CREATE INDEX fa_operations_queued ON fa_operations (activity_id, device_id, seq) WHERE status IN ('queued', 'sending')",
  "CREATE TABLE fa_deliveries (id text PRIMARY KEY, device_id text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
  "CREATE INDEX fa_deliveries_device ON fa_deliveries (device_id, id)",
  `INSERT INTO fa_activities (id, props, sequence) SELECT 'fa_' || i, '{"title":"Job","progress":0}', 1 FROM generate_series(0, ${activities - 1}) i`,
  `INSERT INTO fa_targets SELECT a.id, a.id || '_' || p, a.id || '_token_' || p FROM fa_activities a, unnest(ARRAY['ios', 'android']) p`
]

/** One guarded write per update; concurrent activities' updates share it. $1: [{id, expected, payload}], $2: their ids. */
const writeSql = `
  WITH i AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(id text, expected int, payload jsonb)),
  a AS (
    UPDATE fa_activities f SET props = i.payload->'apns'->'aps'->'content-state', sequence = f.sequence + 1, updated_at = now()
    FROM i WHERE f.id = i.id AND f.id = ANY($2::text[]) AND f.sequence = i.expected
    RETURNING f.id, f.sequence, i.payload),
  t AS (SELECT a.*, t.device_id FROM a JOIN fa_targets t ON t.activity_id = a.id),
  rep AS (
    UPDATE fa_operations o SET payload = t.payload FROM t
    WHERE o.activity_id = t.id AND o.device_id = t.device_id AND o.status = 'queued'
    RETURNING o.activity_id, o.device_id),
  ins AS (
    INSERT INTO fa_operations (id, activity_id, device_id, seq, payload)
    SELECT t.id || '_' || t.device_id || '_' || t.sequence, t.id, t.device_id, t.sequence, t.payload FROM t
    WHERE NOT EXISTS (SELECT 1 FROM rep WHERE rep.activity_id = t.id AND rep.device_id = t.device_id))
  SELECT a.id, a.sequence, (SELECT count(*)::int FROM rep WHERE rep.activity_id = a.id) AS superseded FROM a`

/** Claims the activities' queued snapshots. $1: activity ids. */
const claimSql = `
  UPDATE fa_operations o SET status = 'sending' FROM fa_targets t
  WHERE o.activity_id = ANY($1::text[]) AND o.status = 'queued' AND t.activity_id = o.activity_id AND t.device_id = o.device_id
  RETURNING o.id, o.activity_id, o.device_id, t.token, o.payload`

/** The sandbox provider's record. $1: [{id, device_id, payload}]. */
const deliverSql = `
  INSERT INTO fa_deliveries (id, device_id, payload)
  SELECT id, device_id, payload FROM jsonb_to_recordset($1::jsonb) AS d(id text, device_id text, payload jsonb)`

/** $1: operation ids. */
const acceptSql = "UPDATE fa_operations SET status = 'accepted', sent_at = now() WHERE id = ANY($1::text[]) AND status = 'sending'"

interface Write { readonly id: string; readonly expected: number; readonly payload: PushMessage }
interface Claimed { readonly id: string; readonly activity_id: string; readonly device_id: string; readonly token: string; readonly payload: PushMessage }
interface Activity {
  props: Record<string, unknown>
  sequence: number
  lastSent: number
  timer: boolean
  readonly lock: Semaphore.Semaphore
}

const Handlers = HttpApiBuilder.group(Api, "activities", Effect.fn(function*(handlers) {
  const sql = yield* SqlClient.SqlClient
  const count = Number(process.argv[4] ?? 200)
  yield* Effect.forEach(setup(count), (statement) => sql.unsafe(statement), { discard: true }).pipe(Effect.orDie)
  const activities = new Map<string, Activity>()
  for (let i = 0; i < count; i++) {
    activities.set(`fa_${i}`, { props: { title: "Job", progress: 0 }, sequence: 1, lastSent: 0, timer: false, lock: yield* Semaphore.make(1) })
  }

  const write = batched((writes: NonEmptyReadonlyArray<Write>) =>
    Effect.map(sql.unsafe<{ id: string; sequence: number; superseded: number }>(writeSql, [JSON.stringify(writes), writes.map((w) => w.id)]), (rows) => {
      const byId = new Map(rows.map((r) => [r.id, r]))
      return writes.map((w) => byId.get(w.id))
    }).pipe(Effect.orDie))
  const claim = batched((ids: NonEmptyReadonlyArray<string>) =>
    Effect.map(sql.unsafe<Claimed>(claimSql, [[...ids]]), (rows) => ids.map((id) => rows.filter((r) => r.activity_id === id))).pipe(Effect.orDie))
  const deliver = batched((ops: NonEmptyReadonlyArray<Claimed>) => {
    const deliveries = ops.map((o) => ({ id: `sbx_${randomUUID()}`, device_id: o.device_id, payload: o.payload.apns }))
    return sql.unsafe(deliverSql, [JSON.stringify(deliveries)]).pipe(Effect.as(deliveries.map((d) => d.id)), Effect.orDie)
  })
  const accept = batched((ids: NonEmptyReadonlyArray<string>) =>
    sql.unsafe(acceptSql, [[...ids]]).pipe(Effect.as(ids.map(() => undefined)), Effect.orDie))

  const send = (id: string) =>
    Effect.flatMap(claim(id), (ops) =>
      Effect.forEach(ops, (op) => Effect.andThen(deliver(op), accept(op.id)), { concurrency: "unbounded", discard: true }))

  // At most one send a second per activity (to each of its devices): the next one waits for its slot.
  const wake = (id: string, activity: Activity, now: number) => {
    if (activity.timer) return Effect.void
    activity.timer = true
    return Effect.asVoid(Effect.forkDetach(Effect.gen(function*() {
      yield* Effect.sleep(Duration.millis(Math.max(0, activity.lastSent + 1000 - now)))
      activity.lastSent = yield* Clock.currentTimeMillis
      activity.timer = false
      // Under the activity's lock, as its writes: statements shared by several activities never wait on each other's rows.
      yield* activity.lock.withPermit(send(id))
    })))
  }

  return handlers.handle("update", ({ params, payload }) =>
    Effect.gen(function*() {
      const activity = activities.get(params.id)
      if (activity === undefined) return yield* new HttpApiError.NotFound()
      // Runs to its end once begun (as Herald's actor does): a caller going away must not leave the write unrecorded.
      return yield* activity.lock.withPermit(Effect.uninterruptible(Effect.gen(function*() {
        const props = { ...activity.props }
        for (const [key, value] of Object.entries(payload.props)) {
          if (value === null) delete props[key]
          else props[key] = value
        }
        const now = yield* Clock.currentTimeMillis
        const message = liveActivityMessage({ activityId: params.id, event: "update", state: props, priority: 5, timestampSeconds: Math.floor(now / 1000) })
        if (payloadBytes(message) > PAYLOAD_LIMIT) return yield* new HttpApiError.BadRequest()
        const written = yield* write({ id: params.id, expected: activity.sequence, payload: message })
        if (written === undefined) return yield* Effect.die(new Error(`activity ${params.id} changed elsewhere`))
        activity.props = props
        activity.sequence = written.sequence
        yield* wake(params.id, activity, now)
        return { activity: { id: params.id, props, sequence: written.sequence }, superseded: written.superseded, queued: 2 }
      })))
    }))
}))

// Each 5 s window's event-loop delay p99, time paused for garbage collection and longest pause (ms), as
// Herald's ProcessMetrics measures its own.
const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()
let gcPaused = 0
let gcLongest = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPaused += entry.duration
    gcLongest = Math.max(gcLongest, entry.duration)
  }
}).observe({ entryTypes: ["gc"] })
setInterval(() => {
  process.stdout.write(`eld ${(histogram.percentile(99) / 1e6).toFixed(1)} ${gcPaused.toFixed(1)} ${gcLongest.toFixed(1)}\n`)
  histogram.reset()
  gcPaused = 0
  gcLongest = 0
}, 5_000).unref()

const { database, port } = databaseFloorArgs("herald-activity-floor")
runPrintingPort(bareServer(HttpApiBuilder.layer(Api).pipe(Layer.provide(Handlers)), port).pipe(Layer.provide(database)), port)
