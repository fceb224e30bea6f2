/**
 * SQL of idempotency keys: one row per (account, route, key), claimed by the
 * first request (`running`), holding its answer once it is `done`.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql"

export interface KeyRef {
  readonly userId: string
  readonly route: string
  readonly key: string
}

export const KeyRow = Schema.Struct({
  requestHash: Schema.String,
  state: Schema.Literals(["running", "done"]),
  response: Schema.NullOr(Schema.Unknown),
  /** The row's time is past the replay window (or its running claim is stale): it may be taken over. */
  expired: Schema.Boolean
})
export type KeyRow = typeof KeyRow.Type
const decodeRows = Schema.decodeUnknownSync(Schema.Array(KeyRow))

export class IdempotencyRepo extends Context.Service<IdempotencyRepo, {
  /**
   * Claims the key for a request with `requestHash`: true when this call now
   * owns it (no row, or an expired one it replaced); false when another row
   * stands (read it with `find`).
   */
  readonly claim: (ref: KeyRef, requestHash: string, window: { readonly replaySeconds: number; readonly lockSeconds: number }) => Effect.Effect<boolean>
  readonly find: (ref: KeyRef, window: { readonly replaySeconds: number; readonly lockSeconds: number }) => Effect.Effect<KeyRow | undefined>
  readonly complete: (ref: KeyRef, response: unknown) => Effect.Effect<void, SqlError.SqlError>
  /** Releases a claim whose request failed, so a retry runs afresh. */
  readonly release: (ref: KeyRef) => Effect.Effect<void>
  /** Deletes rows past the replay window; answers how many. */
  readonly purge: (replaySeconds: number) => Effect.Effect<number>
}>()("herald/IdempotencyRepo") {
  static readonly layer = Layer.effect(IdempotencyRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // A row may be replaced when its replay window has passed, or when it is
    // still `running` past its lock (the process that claimed it died).
    const expiredCondition = (replaySeconds: number) => sql`(
      idempotency_keys.created_at < now() - make_interval(secs => ${replaySeconds})
      OR (idempotency_keys.state = 'running' AND idempotency_keys.locked_until < now()))`

    const claim = (ref: KeyRef, requestHash: string, window: { readonly replaySeconds: number; readonly lockSeconds: number }) =>
      sql`
        INSERT INTO idempotency_keys (user_id, route, key, request_hash, state, locked_until)
        VALUES (${ref.userId}, ${ref.route}, ${ref.key}, ${requestHash}, 'running',
                now() + make_interval(secs => ${window.lockSeconds}))
        ON CONFLICT (user_id, route, key) DO UPDATE SET
          request_hash = excluded.request_hash, state = 'running', response_status = NULL, response = NULL,
          created_at = now(), locked_until = excluded.locked_until
        WHERE ${expiredCondition(window.replaySeconds)}
        RETURNING true AS claimed`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie) // one row when claimed: its count is the answer

    const find = (ref: KeyRef, window: { readonly replaySeconds: number; readonly lockSeconds: number }) =>
      sql`
        SELECT request_hash, state, response, ${expiredCondition(window.replaySeconds)} AS expired
        FROM idempotency_keys WHERE user_id = ${ref.userId} AND route = ${ref.route} AND key = ${ref.key}`.pipe(
        Effect.map((rows) => decodeRows(rows)[0]),
        Effect.orDie
      )

    const complete = (ref: KeyRef, response: unknown) =>
      sql`
        UPDATE idempotency_keys SET state = 'done', response = ${JSON.stringify(response)}::jsonb, locked_until = NULL
        WHERE user_id = ${ref.userId} AND route = ${ref.route} AND key = ${ref.key}`.pipe(Effect.asVoid)

    const release = (ref: KeyRef) =>
      sql`DELETE FROM idempotency_keys
          WHERE user_id = ${ref.userId} AND route = ${ref.route} AND key = ${ref.key} AND state = 'running'`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const purged = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (replaySeconds) => sql`
        WITH gone AS (
          DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => ${replaySeconds}) RETURNING 1)
        SELECT count(*)::int AS n FROM gone`
    })
    const purge = (replaySeconds: number) => purged(replaySeconds).pipe(Effect.map((row) => row.n), Effect.orDie)

    return IdempotencyRepo.of({ claim, find, complete, release, purge })
  }))
}
