/**
 * Per-account advisory locks for count-then-insert limits ("at most 50 reply
 * webhooks"): taken inside the caller's transaction, so concurrent creates of
 * one account count one after another and the limit holds. Each resource has
 * its own lock space; other accounts never wait.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

export const LockSpace = {
  services: 0x5356,
  replyWebhooks: 0x5748
} as const

export const lockAccount = (sql: SqlClient.SqlClient, space: number, userId: string) =>
  sql`SELECT pg_advisory_xact_lock(${space}, hashtext(${userId}))`.pipe(Effect.asVoid)
