/**
 * Limits counted under a lock ("at most 50 reply webhooks"): every create that
 * counts before it inserts takes a transaction-scoped advisory lock of its
 * resource and owner first (`countLocked`), or counts under a row lock it
 * already holds, so concurrent creates count one after another and the limit
 * holds. Each resource has its own lock space; other owners never wait.
 */
import { LimitReached } from "@herald/api"
import { Effect, Schema } from "effect"
import type { SqlClient, SqlError } from "effect/sql"

/** Every lock space, here so no two resources share one. */
export const LockSpace = {
  services: 0x5356,
  replyWebhooks: 0x5748,
  apps: 0x4150,
  // Keyed by team id: device groups per team.
  deviceGroups: 0x4447,
  // Families a person belongs to.
  families: 0x544d,
  // Keyed by team id: on-call groups per team.
  oncallGroups: 0x4f43,
  packages: 0x4d41,
  connectors: 0x434e,
  // One key for the server: OAuth clients waiting for a first approval.
  oauthClients: 0x4f41
} as const

export const lockAccount = (sql: SqlClient.SqlClient, space: number, key: string) =>
  sql`SELECT pg_advisory_xact_lock(${space}, hashtext(${key}))`.pipe(Effect.asVoid)

const decodeCount = Schema.decodeUnknownEffect(Schema.Tuple([Schema.Struct({ n: Schema.Number })]))

/**
 * What `count` (a `SELECT count(*)::int AS n …`) answers once `key`'s lock in
 * `space` is held: in the caller's transaction, which keeps the lock to its end.
 */
export const countLocked = (
  sql: SqlClient.SqlClient,
  space: number,
  key: string,
  count: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>
): Effect.Effect<number> =>
  lockAccount(sql, space, key).pipe(
    Effect.andThen(count),
    Effect.flatMap(decodeCount),
    Effect.map(([row]) => row.n),
    Effect.orDie
  )

export interface Limit<E, R> {
  /** Taken under the lock that orders these creates (`countLocked`, or a row lock held), in the caller's transaction. */
  readonly count: Effect.Effect<number, E, R>
  readonly limit: number
  /** What the refusal says, e.g. "A team keeps at most 20 device groups." */
  readonly error: string
}

/** Succeeds while `count` is under `limit`; else 422 `LIMIT_REACHED`. The create follows in the same transaction. */
export const checkLimit = <E = never, R = never>(options: Limit<E, R>): Effect.Effect<void, E | LimitReached, R> =>
  Effect.flatMap(options.count, (n) =>
    n >= options.limit ? Effect.fail(new LimitReached({ error: options.error, limit: options.limit })) : Effect.void)

/** Runs `insert` once `checkLimit` passes. */
export const withinLimit = <A, E, R, E2 = never, R2 = never>(
  options: Limit<E2, R2>,
  insert: Effect.Effect<A, E, R>
): Effect.Effect<A, E | E2 | LimitReached, R | R2> => Effect.andThen(checkLimit(options), insert)

/** `withinLimit` in a transaction of its own, for a repo's insert: "An account keeps at most `limit` `what`." */
export const insertWithinLimit = <A, E, R>(
  sql: SqlClient.SqlClient,
  options: { readonly count: Effect.Effect<number>; readonly limit: number; readonly what: string },
  insert: Effect.Effect<A, E, R>
): Effect.Effect<A, E | LimitReached, R> =>
  sql.withTransaction(withinLimit({
    count: options.count,
    limit: options.limit,
    error: `An account keeps at most ${options.limit} ${options.what}.`
  }, insert)).pipe(Effect.catchTag("SqlError", Effect.die))
