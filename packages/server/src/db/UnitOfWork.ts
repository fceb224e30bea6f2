/**
 * The unit of work: the rows one request writes across capabilities (a
 * notification, its inbox copy and feed entry, its push receipts…) are
 * committed together by one statement, each kind of row a data-modifying CTE
 * member, so the write is atomic and costs one round trip. Units committed by
 * concurrent requests go together (group commit): their rows of one kind share
 * one INSERT, so fifty sends cost one round trip, not fifty.
 *
 * A repo declares each kind of row it writes as a `Writer` and writes through
 * `write`: inside `UnitOfWork.commit` the rows join the current unit; outside
 * one they are written at once (in the caller's transaction, if any). No repo
 * hands out a statement and no service sees SQL.
 *
 * The rows exist only once `commit` returns: wake workers or send after it
 * (or register the signal with `afterCommit`, which waits for the unit).
 *
 * One request's bad row must not fail the others it was grouped with: when a
 * group's statement fails (a device deleted a moment after a request was
 * checked breaks its foreign key), each unit is written again on its own, so
 * only the request that named the missing row fails — with `MissingReference`,
 * which its service answers as the endpoint's 404.
 */
import { Context, Effect, Exit, Layer, Option } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { batched } from "./Batching.ts"
import { MissingReference, orMissingReference } from "./ForeignKeys.ts"

/**
 * One kind of row a repo writes: the data-modifying statements writing any
 * number of them (each valid as a CTE member), and the same as one statement
 * for a write outside a unit of work.
 */
export interface Writer<Row> {
  readonly members: (rows: NonEmptyReadonlyArray<Row>) => ReadonlyArray<Statement.Statement<unknown>>
  readonly statement: (rows: NonEmptyReadonlyArray<Row>) => Statement.Statement<unknown>
}

/** Several data-modifying statements as one: `WITH w0 AS (…), w1 AS (…) SELECT 1` (atomic, one round trip). */
const together = (sql: SqlClient.SqlClient, members: ReadonlyArray<Statement.Statement<unknown>>) =>
  members.length === 1
    ? members[0]!
    : sql`WITH ${sql.join(", ", false)(members.map((member, i) => sql`${sql.literal(`w${i}`)} AS (${member})`))} SELECT 1`

export const makeWriter = <Row>(statement: (rows: NonEmptyReadonlyArray<Row>) => Statement.Statement<unknown>): Writer<Row> => ({
  members: (rows) => [statement(rows)],
  statement
})

/**
 * A writer whose rows go to several tables (a push receipt and its queue row):
 * always in one statement, inside a unit of work or not, so they exist
 * together or not at all.
 */
export const makeJointWriter = <Row>(
  sql: SqlClient.SqlClient,
  members: (rows: NonEmptyReadonlyArray<Row>) => ReadonlyArray<Statement.Statement<unknown>>
): Writer<Row> => ({ members, statement: (rows) => together(sql, members(rows)) })

/** The rows enlisted so far, by writer, in the order the writers first enlisted, and what runs once they commit. */
interface Unit {
  readonly rows: Map<Writer<never>, Array<unknown>>
  readonly after: Array<Effect.Effect<void>>
  closed: boolean
}

const CurrentUnit = Context.Reference<Unit | undefined>("herald/CurrentUnit", { defaultValue: () => undefined })

/**
 * Writes `rows` with `writer`: into the current unit of work when there is one
 * (written at its commit), else now.
 */
export const write = <Row>(writer: Writer<Row>, rows: ReadonlyArray<Row>): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (rows.length === 0) return
    const unit = yield* CurrentUnit
    if (unit === undefined) {
      return yield* writer.statement(rows as unknown as NonEmptyReadonlyArray<Row>).pipe(Effect.asVoid, Effect.orDie)
    }
    // A fiber forked by the body and still writing after the commit would lose its rows silently.
    if (unit.closed) return yield* Effect.die(new Error("a write joined a unit of work that had already ended"))
    const key = writer as unknown as Writer<never>
    const pending = unit.rows.get(key)
    if (pending === undefined) unit.rows.set(key, [...rows])
    else pending.push(...rows)
  })

/**
 * Runs `effect` once what was written so far is committed: after the current
 * unit of work's statement when there is one, else once the caller's
 * transaction commits (at once when there is none). Dropped when the write
 * fails. For signals (telling an open inbox stream), never for work that must
 * happen: that belongs in a row written with the rest.
 */
export const afterCommit = (sql: SqlClient.SqlClient, effect: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.gen(function*() {
    const unit = yield* CurrentUnit
    if (unit === undefined) return yield* sql.afterCommit(effect)
    if (unit.closed) return yield* Effect.die(new Error("an after-commit effect joined a unit of work that had already ended"))
    unit.after.push(effect)
  })

export class UnitOfWork extends Context.Service<UnitOfWork, {
  /**
   * Runs `body`, collecting the rows its repo writes enlist, then commits them
   * in one statement (with other requests' units when not inside a
   * transaction) and answers what `body` answered. A failing body commits
   * nothing. Inside another unit, `body`'s rows join that one. Fails with
   * `MissingReference` when a row names one deleted since it was checked.
   */
  readonly commit: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E | MissingReference, R>
}>()("herald/UnitOfWork") {
  static readonly layer = Layer.effect(UnitOfWork, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Each writer's rows of every unit, in the order writers first appear.
    const statementOf = (units: ReadonlyArray<Unit>) => {
      const merged = new Map<Writer<never>, Array<unknown>>()
      for (const unit of units) {
        for (const [writer, rows] of unit.rows) {
          const pending = merged.get(writer)
          if (pending === undefined) merged.set(writer, [...rows])
          else pending.push(...rows)
        }
      }
      return together(sql, [...merged].flatMap(([writer, rows]) => writer.members(rows as unknown as NonEmptyReadonlyArray<never>)))
    }
    const runNow = (units: ReadonlyArray<Unit>) => orMissingReference(Effect.asVoid(statementOf(units)))
    // A failed statement wrote nothing: each unit again on its own, so the failure stays with the unit that caused it.
    const groupCommit = batched((units: NonEmptyReadonlyArray<Unit>) =>
      units.length === 1
        ? Effect.map(Effect.exit(runNow(units)), (exit) => [exit])
        : statementOf(units).pipe(
          Effect.as(units.map((): Exit.Exit<void, MissingReference> => Exit.void)),
          Effect.catch(() => Effect.forEach(units, (unit) => Effect.exit(runNow([unit]))))
        ))

    // No span: every request that writes passes here, and the statement has its own.
    const commit = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E | MissingReference, R> =>
      Effect.gen(function*() {
        if ((yield* CurrentUnit) !== undefined) return yield* body
        const unit: Unit = { rows: new Map(), after: [], closed: false }
        const result = yield* Effect.provideService(body, CurrentUnit, unit).pipe(
          Effect.ensuring(Effect.sync(() => {
            unit.closed = true
          }))
        )
        if (unit.rows.size > 0) {
          // Inside a transaction the unit is that transaction's: it cannot share a statement with other requests.
          const inTransaction = Option.isSome(yield* Effect.serviceOption(sql.transactionService))
          yield* inTransaction ? runNow([unit]) : Effect.flatten(groupCommit(unit))
        }
        // Inside a transaction, not before it commits.
        yield* Effect.forEach(unit.after, (effect) => sql.afterCommit(effect), { discard: true })
        return result
      })

    return UnitOfWork.of({ commit })
  }))
}
