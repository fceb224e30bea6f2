/**
 * SQL of the rate-limit budgets every node shares (SharedRateLimits.ts): one
 * row per key (a token, or a webhook service) holding each budget's GCRA
 * theoretical arrival time in epoch milliseconds of the service clock; NULL,
 * or no row, is a whole budget. Check-and-take is one statement, so two nodes
 * can never both take the last unit: PostgreSQL checks the condition on the
 * row's latest version under its row lock (`take`: `INSERT … ON CONFLICT DO
 * UPDATE … WHERE`; `takeEach`, several keys at once: `UPDATE … WHERE` of the
 * rows that exist and `INSERT … ON CONFLICT DO NOTHING` of the others).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"

/** A key's stored times (epoch ms); null: that budget is whole. */
export const BudgetTimes = Schema.Struct({
  requestsTat: Schema.NullOr(Schema.Number),
  sendsTat: Schema.NullOr(Schema.Number),
  /** The latest time any take of the key was measured at (migration 0021 says why). */
  nowMs: Schema.NullOr(Schema.Number)
})
export type BudgetTimes = typeof BudgetTimes.Type

const decodeTake = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ taken: Schema.Boolean, ...BudgetTimes.fields })))
const decodeTimes = Schema.decodeUnknownEffect(Schema.Array(BudgetTimes))
const decodeKeyed = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ key: Schema.String, ...BudgetTimes.fields })))

/**
 * The float tolerance of "fits in the window" (ms): epoch milliseconds carry
 * about 2.4e-4 ms of float precision, so a whole budget taken at one instant
 * must not be refused by the sum's last bit.
 */
const TOLERANCE_MS = 1e-3

/** Units to take from a key's budgets at `now`, each with its interval per unit (ms); 0 units: that budget is left alone. */
export interface Take {
  readonly key: string
  readonly now: number
  readonly requests: number
  readonly requestsInterval: number
  readonly sends: number
  readonly sendsInterval: number
}

/** Taken: the key's times after the take. Refused: its times as the statement found them (none: no row). */
export interface TakeResult {
  readonly taken: boolean
  readonly times: BudgetTimes | undefined
}

export class RateLimitRepo extends Context.Service<RateLimitRepo, {
  /** Takes every unit or none, in one statement. */
  readonly take: (take: Take, windowMs: number) => Effect.Effect<TakeResult>
  /**
   * Takes several keys' units in one statement, each key all or none (each
   * key at most once): per take, the key's times after it, or undefined when
   * it was not taken here — the units did not fit, or the key's row came or
   * went under a concurrent statement; `take` then decides it exactly.
   */
  readonly takeEach: (takes: ReadonlyArray<Take>, windowMs: number) => Effect.Effect<ReadonlyArray<BudgetTimes | undefined>>
  /** The key's stored times, taking nothing. */
  readonly times: (key: string) => Effect.Effect<BudgetTimes | undefined>
  /** Deletes the rows whose budgets are all whole at `now` (they behave exactly like absent ones). */
  readonly sweep: (now: number) => Effect.Effect<void>
}>()("herald/RateLimitRepo") {
  static readonly layer = Layer.effect(RateLimitRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // A new key is inserted only when the units fit a whole budget; an existing one is updated only
    // when they fit what is left (the GCRA rule: the new time at most one window ahead of now).
    // Refused, the outer SELECT reads the row as the statement's snapshot saw it, for Retry-After.
    const take = (t: Take, windowMs: number) => {
      const window = windowMs + TOLERANCE_MS
      return sql`
        WITH taken AS (
          INSERT INTO rate_limit_budgets AS b (key, requests_tat, sends_tat, now_ms)
          SELECT ${t.key}::text,
            CASE WHEN ${t.requests}::int > 0 THEN ${t.now}::float8 + ${t.requestsInterval}::float8 * ${t.requests}::int END,
            CASE WHEN ${t.sends}::int > 0 THEN ${t.now}::float8 + ${t.sendsInterval}::float8 * ${t.sends}::int END,
            ${t.now}::float8
          WHERE ${t.requestsInterval}::float8 * ${t.requests}::int <= ${window}::float8
            AND ${t.sendsInterval}::float8 * ${t.sends}::int <= ${window}::float8
          ON CONFLICT (key) DO UPDATE SET
            requests_tat = CASE WHEN ${t.requests}::int > 0
              THEN greatest(b.requests_tat, b.now_ms, ${t.now}::float8) + ${t.requestsInterval}::float8 * ${t.requests}::int
              ELSE b.requests_tat END,
            sends_tat = CASE WHEN ${t.sends}::int > 0
              THEN greatest(b.sends_tat, b.now_ms, ${t.now}::float8) + ${t.sendsInterval}::float8 * ${t.sends}::int
              ELSE b.sends_tat END,
            now_ms = greatest(b.now_ms, ${t.now}::float8)
          WHERE (${t.requests}::int = 0
              OR greatest(b.requests_tat, b.now_ms, ${t.now}::float8) + ${t.requestsInterval}::float8 * ${t.requests}::int
                <= greatest(b.now_ms, ${t.now}::float8) + ${window}::float8)
            AND (${t.sends}::int = 0
              OR greatest(b.sends_tat, b.now_ms, ${t.now}::float8) + ${t.sendsInterval}::float8 * ${t.sends}::int
                <= greatest(b.now_ms, ${t.now}::float8) + ${window}::float8)
          RETURNING requests_tat, sends_tat, now_ms)
        SELECT true AS taken, requests_tat, sends_tat, now_ms FROM taken
        UNION ALL
        SELECT false, requests_tat, sends_tat, now_ms FROM rate_limit_budgets
        WHERE key = ${t.key} AND NOT EXISTS (SELECT 1 FROM taken)`.pipe(
        Effect.flatMap(decodeTake),
        Effect.map((rows): TakeResult => {
          const row = rows[0]
          return row === undefined
            ? { taken: false, times: undefined }
            : { taken: row.taken, times: { requestsTat: row.requestsTat, sendsTat: row.sendsTat, nowMs: row.nowMs } }
        }),
        Effect.orDie
      )
    }

    // Existing rows are updated under their row locks (a concurrent change is re-checked on the row's
    // latest version); absent ones inserted, except one another statement inserts meanwhile (DO NOTHING:
    // not taken here). The UPDATE cannot see the INSERT's rows, nor the INSERT the UPDATE's: each key
    // goes through exactly one of them.
    const takeEach = (takes: ReadonlyArray<Take>, windowMs: number) => {
      const window = windowMs + TOLERANCE_MS
      const rows = takes.map((t) => ({ key: t.key, now: t.now, r: t.requests, ri: t.requestsInterval, s: t.sends, si: t.sendsInterval }))
      return sql`
        WITH v AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
            AS v(key text, now float8, r int, ri float8, s int, si float8)),
        updated AS (
          UPDATE rate_limit_budgets b SET
            requests_tat = CASE WHEN v.r > 0 THEN greatest(b.requests_tat, b.now_ms, v.now) + v.ri * v.r ELSE b.requests_tat END,
            sends_tat = CASE WHEN v.s > 0 THEN greatest(b.sends_tat, b.now_ms, v.now) + v.si * v.s ELSE b.sends_tat END,
            now_ms = greatest(b.now_ms, v.now)
          FROM v
          WHERE b.key = v.key
            AND (v.r = 0 OR greatest(b.requests_tat, b.now_ms, v.now) + v.ri * v.r <= greatest(b.now_ms, v.now) + ${window}::float8)
            AND (v.s = 0 OR greatest(b.sends_tat, b.now_ms, v.now) + v.si * v.s <= greatest(b.now_ms, v.now) + ${window}::float8)
          RETURNING b.key, b.requests_tat, b.sends_tat, b.now_ms),
        inserted AS (
          INSERT INTO rate_limit_budgets (key, requests_tat, sends_tat, now_ms)
          SELECT v.key, CASE WHEN v.r > 0 THEN v.now + v.ri * v.r END, CASE WHEN v.s > 0 THEN v.now + v.si * v.s END, v.now
          FROM v
          WHERE NOT EXISTS (SELECT 1 FROM rate_limit_budgets e WHERE e.key = v.key)
            AND v.ri * v.r <= ${window}::float8 AND v.si * v.s <= ${window}::float8
          ON CONFLICT (key) DO NOTHING
          RETURNING key, requests_tat, sends_tat, now_ms)
        SELECT key, requests_tat, sends_tat, now_ms FROM updated
        UNION ALL
        SELECT key, requests_tat, sends_tat, now_ms FROM inserted`.pipe(
        Effect.flatMap(decodeKeyed),
        Effect.map((found) => {
          const byKey = new Map(found.map((row) => [row.key, { requestsTat: row.requestsTat, sendsTat: row.sendsTat, nowMs: row.nowMs }]))
          return takes.map((t) => byKey.get(t.key))
        }),
        Effect.orDie
      )
    }

    const times = (key: string) =>
      sql`SELECT requests_tat, sends_tat, now_ms FROM rate_limit_budgets WHERE key = ${key}`.pipe(
        Effect.flatMap(decodeTimes),
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    const sweep = (now: number) =>
      sql`DELETE FROM rate_limit_budgets
          WHERE coalesce(requests_tat, 0) <= ${now}::float8 AND coalesce(sends_tat, 0) <= ${now}::float8`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return RateLimitRepo.of({ take, takeEach, times, sweep })
  }))
}
