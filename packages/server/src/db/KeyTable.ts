/**
 * The SQL of a table of rotating keys (`web_push_keys`, `mini_app_keys`): one
 * current key (`retired_at` null, a unique partial index), retired keys kept
 * on record (their signatures must still verify), rotations taking turns
 * under a table lock. Each key's repo adds what is its own.
 */
import { Effect, Schema } from "effect"
import type { Option } from "effect"
import type { SqlClient } from "effect/sql"
import { SqlSchema } from "effect/sql"

/** A key to store, its parts encoded as its table keeps them. */
export interface NewKeyRow {
  readonly keyId: string
  readonly publicKey: string
  readonly privateKey: string
}

export interface KeyTable<Row> {
  /** The current key, if one has been made. */
  readonly findCurrent: Effect.Effect<Option.Option<Row>>
  /** Every key, newest first. */
  readonly all: Effect.Effect<ReadonlyArray<Row>>
  /**
   * Stores a key as the current one. With `ifNoneCurrent` a key already current
   * wins and this does nothing (concurrent first needs converge on one).
   */
  readonly insert: (key: NewKeyRow, options: { readonly ifNoneCurrent: boolean }) => Effect.Effect<void>
  /** Locks the table for the rest of the transaction: rotations take turns. */
  readonly lockForRotation: Effect.Effect<void>
  /** Retires the current key (if any). */
  readonly retireCurrent: Effect.Effect<void>
  /** Runs `effect` in one transaction (a rotation). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** The statements of `table`, whose rows (`columns`, in the order of `Row`'s fields) decode with `Row`. */
export const keyTable = <Row extends Schema.Constraint & { readonly DecodingServices: never }>(
  sql: SqlClient.SqlClient,
  table: "web_push_keys" | "mini_app_keys",
  columns: string,
  Row: Row
): KeyTable<Row["Type"]> => {
  const name = sql(table)
  const select = sql.literal(columns)
  const findCurrent = SqlSchema.findOneOption({
    Request: Schema.Void,
    Result: Row,
    execute: () => sql`SELECT ${select} FROM ${name} WHERE retired_at IS NULL`
  })
  const all = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Row,
    execute: () => sql`SELECT ${select} FROM ${name} ORDER BY created_at DESC, key_id DESC`
  })
  return {
    findCurrent: findCurrent(undefined).pipe(Effect.orDie),
    all: all(undefined).pipe(Effect.orDie),
    insert: (key, { ifNoneCurrent }) =>
      sql`INSERT INTO ${name} (key_id, public_key, private_key)
          VALUES (${key.keyId}, ${key.publicKey}, ${key.privateKey})
          ${ifNoneCurrent ? sql`ON CONFLICT DO NOTHING` : sql``}`.pipe(Effect.asVoid, Effect.orDie),
    lockForRotation: sql`LOCK TABLE ${name} IN SHARE ROW EXCLUSIVE MODE`.pipe(Effect.asVoid, Effect.orDie),
    retireCurrent: sql`UPDATE ${name} SET retired_at = now() WHERE retired_at IS NULL`.pipe(Effect.asVoid, Effect.orDie),
    inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
  }
}
