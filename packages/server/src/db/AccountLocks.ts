/**
 * Per-account advisory locks for count-then-insert limits ("at most 50 reply
 * webhooks"): taken inside the caller's transaction, so concurrent creates of
 * one account count one after another and the limit holds. Each resource has
 * its own lock space; other accounts never wait.
 */
import { LimitReached } from "@herald/api"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

export const LockSpace = {
  services: 0x5356,
  replyWebhooks: 0x5748,
  apps: 0x4150,
  // Keyed by team id: device groups per team.
  deviceGroups: 0x4447,
  // Families a person belongs to.
  families: 0x544d,
  // Keyed by team id: on-call groups per team.
  oncallGroups: 0x4f43
} as const

export const lockAccount = (sql: SqlClient.SqlClient, space: number, userId: string) =>
  sql`SELECT pg_advisory_xact_lock(${space}, hashtext(${userId}))`.pipe(Effect.asVoid)

/**
 * Runs `insert` in a transaction once `count` (which takes the account's lock)
 * shows room under `limit`; else 422 `LIMIT_REACHED` naming `what` is kept.
 */
export const insertWithinLimit = <A, E, R>(
  sql: SqlClient.SqlClient,
  options: { readonly count: Effect.Effect<number>; readonly limit: number; readonly what: string },
  insert: Effect.Effect<A, E, R>
): Effect.Effect<A, E | LimitReached, R> =>
  sql.withTransaction(Effect.flatMap(options.count, (n): Effect.Effect<A, E | LimitReached, R> =>
    n >= options.limit
      ? Effect.fail(new LimitReached({ error: `An account keeps at most ${options.limit} ${options.what}.`, limit: options.limit }))
      : insert)).pipe(Effect.catchTag("SqlError", Effect.die))
