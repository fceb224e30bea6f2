/**
 * SQL of quiet hours: the settings (`quiet_hours`, one row per person who set
 * them) and the held items awaiting their summary (`quiet_held`). A change of
 * settings is announced with `NOTIFY herald_quiet` (payload: the person's id)
 * in its own statement, so every process's cache re-reads that row once it is
 * committed (quiet/QuietGate.ts). Rules live in QuietHours.ts and Summaries.ts.
 */
import { QuietWindow } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { makeWriter, write } from "../db/UnitOfWork.ts"

/** The NOTIFY channel of settings changes. */
export const QUIET_CHANNEL = "herald_quiet"

export const SettingsRow = Schema.Struct({
  userId: Schema.String,
  enabled: Schema.Boolean,
  timeZone: Schema.String,
  windows: Schema.Array(QuietWindow),
  mode: Schema.Literals(["silent", "hold"]),
  mutedUntil: Schema.NullOr(Schema.String)
})
export type SettingsRow = typeof SettingsRow.Type

/** An item whose pushes were held, due for the summary at `releaseAt`. */
export interface HeldRow {
  readonly userId: string
  readonly origin: string
  readonly itemId: string
  readonly title: string
  readonly releaseAt: string
}

/** A held item claimed for its summary; `read`: its inbox copy was read meanwhile (left out of the summary). */
export const ClaimedHeld = Schema.Struct({
  origin: Schema.String,
  itemId: Schema.String,
  title: Schema.String,
  read: Schema.Boolean
})
export type ClaimedHeld = typeof ClaimedHeld.Type

export const NewSettings = Schema.Struct({
  userId: Schema.String,
  enabled: Schema.Boolean,
  timeZone: Schema.String,
  windows: Schema.Array(QuietWindow),
  mode: Schema.Literals(["silent", "hold"])
})
export type NewSettings = typeof NewSettings.Type

const columns = "user_id, enabled, time_zone, windows, mode, muted_until"

export class QuietRepo extends Context.Service<QuietRepo, {
  readonly all: Effect.Effect<ReadonlyArray<SettingsRow>>
  readonly find: (userId: string) => Effect.Effect<SettingsRow | undefined>
  /** Replaces the schedule (the mute stays) and announces the change. */
  readonly put: (settings: NewSettings) => Effect.Effect<SettingsRow>
  /** Sets or clears the mute (a row with the defaults when there was none) and announces the change. */
  readonly setMute: (userId: string, mutedUntil: string | null) => Effect.Effect<SettingsRow>
  /** Held items: in the caller's unit of work or transaction when there is one; an item already held stays as it was. */
  readonly hold: (rows: ReadonlyArray<HeldRow>) => Effect.Effect<void>
  /** How many items are held for the person. */
  readonly heldCount: (userId: string) => Effect.Effect<number>
  /** Moves every held item of the person to be summarised at `releaseAt`. */
  readonly release: (userId: string, releaseAt: string) => Effect.Effect<void>
  /** People with held items due by `now`, at most `limit`. */
  readonly dueUsers: (now: string, limit: number) => Effect.Effect<ReadonlyArray<string>>
  /** Locks the person's held items due by `now` (another node's claim is skipped), oldest first. */
  readonly claim: (userId: string, now: string) => Effect.Effect<ReadonlyArray<ClaimedHeld>>
  /** Deletes the person's held items due by `now` (after `claim`, in its transaction). */
  readonly drop: (userId: string, now: string) => Effect.Effect<void>
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/QuietRepo") {
  static readonly layer = Layer.effect(QuietRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: SettingsRow,
      execute: () => sql`SELECT ${cols} FROM quiet_hours`
    })
    const find = SqlSchema.findAll({
      Request: Schema.String,
      Result: SettingsRow,
      execute: (userId) => sql`SELECT ${cols} FROM quiet_hours WHERE user_id = ${userId}`
    })
    // pg_notify runs per returned row: in the statement's transaction, delivered at its commit.
    const put = SqlSchema.findAll({
      Request: NewSettings,
      Result: SettingsRow,
      execute: (s) => sql`
        WITH u AS (
          INSERT INTO quiet_hours (user_id, enabled, time_zone, windows, mode, updated_at)
          VALUES (${s.userId}, ${s.enabled}, ${s.timeZone}, ${JSON.stringify(s.windows)}::jsonb, ${s.mode}, now())
          ON CONFLICT (user_id) DO UPDATE SET enabled = EXCLUDED.enabled, time_zone = EXCLUDED.time_zone,
            windows = EXCLUDED.windows, mode = EXCLUDED.mode, updated_at = now()
          RETURNING ${cols})
        SELECT u.*, pg_notify(${QUIET_CHANNEL}, u.user_id) AS notified FROM u`
    })
    const setMute = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, mutedUntil: Schema.NullOr(Schema.String) }),
      Result: SettingsRow,
      execute: ({ mutedUntil, userId }) => sql`
        WITH u AS (
          INSERT INTO quiet_hours (user_id, muted_until, updated_at) VALUES (${userId}, ${mutedUntil}::timestamptz, now())
          ON CONFLICT (user_id) DO UPDATE SET muted_until = EXCLUDED.muted_until, updated_at = now()
          RETURNING ${cols})
        SELECT u.*, pg_notify(${QUIET_CHANNEL}, u.user_id) AS notified FROM u`
    })

    const held = makeWriter<HeldRow>((rows) => sql`
      INSERT INTO quiet_held (user_id, origin, item_id, title, release_at)
      SELECT "userId", origin, "itemId", title, "releaseAt"
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r("userId" text, origin text, "itemId" text, title text, "releaseAt" timestamptz)
      ON CONFLICT (user_id, origin, item_id) DO NOTHING`)

    const claim = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, now: Schema.String }),
      Result: ClaimedHeld,
      execute: ({ now, userId }) => sql`
        SELECT h.origin, h.item_id, h.title, (i.read_at IS NOT NULL) AS read
        FROM quiet_held h
        LEFT JOIN inbox_items i ON i.user_id = h.user_id AND i.origin = h.origin AND i.item_id = h.item_id
        WHERE h.user_id = ${userId} AND h.release_at <= ${now}::timestamptz
        ORDER BY h.held_at, h.item_id
        FOR UPDATE OF h SKIP LOCKED`
    })

    const one = <A>(rows: ReadonlyArray<A>) => rows[0]!
    return QuietRepo.of({
      all: all(undefined).pipe(Effect.orDie),
      find: (userId) => find(userId).pipe(Effect.map((rows) => rows[0]), Effect.orDie),
      put: (settings) => put(settings).pipe(Effect.map(one), Effect.orDie),
      setMute: (userId, mutedUntil) => setMute({ userId, mutedUntil }).pipe(Effect.map(one), Effect.orDie),
      hold: (rows) => write(held, rows),
      heldCount: (userId) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM quiet_held WHERE user_id = ${userId}`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        ),
      release: (userId, releaseAt) =>
        sql`UPDATE quiet_held SET release_at = ${releaseAt}::timestamptz WHERE user_id = ${userId}`.pipe(Effect.asVoid, Effect.orDie),
      dueUsers: (now, limit) =>
        sql<{ userId: string }>`
          SELECT DISTINCT user_id FROM quiet_held WHERE release_at <= ${now}::timestamptz LIMIT ${limit}`.pipe(
          Effect.map((rows) => rows.map((r) => r.userId)),
          Effect.orDie
        ),
      claim: (userId, now) => claim({ userId, now }).pipe(Effect.orDie),
      drop: (userId, now) =>
        sql`DELETE FROM quiet_held WHERE user_id = ${userId} AND release_at <= ${now}::timestamptz`.pipe(Effect.asVoid, Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
