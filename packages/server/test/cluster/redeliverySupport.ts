/**
 * Delivering an entity message twice, as effect/cluster may (issue 33). Two ways:
 *
 * - at once on two nodes: two instances of the actor, each built by
 *   `Entity.makeTestClient` on the service's own layers and database, as two
 *   processes hold them while a starting node takes up a message the other is
 *   still processing (`resetShards`);
 * - again after it ran, by the real cluster: the stored message is made
 *   unprocessed and its reply dropped — a message whose reply no node stored,
 *   as after a kill mid-message — and the cluster's poll delivers it again.
 */
import { assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Entity } from "effect/cluster"
import type { Rpc } from "effect/rpc"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"

/**
 * The actor `entityId` on two nodes: one client each, reaching two instances of it. Its layer is built
 * afresh for each (the service already built it once, and layers are shared by reference).
 */
export const onTwoNodes = <Type extends string, Rpcs extends Rpc.Any, LA, LE, LR>(
  entity: Entity.Entity<Type, Rpcs>,
  live: Layer.Layer<LA, LE, LR>,
  entityId: string
) =>
  Effect.gen(function*() {
    const first = yield* Entity.makeTestClient(entity, Layer.fresh(live))
    const second = yield* Entity.makeTestClient(entity, Layer.fresh(live))
    return [yield* first(entityId), yield* second(entityId)] as const
  })

/** A message stored by the cluster: its entity, its rpc tag and, for a page's steps, its deadline key. */
export interface Stored {
  readonly entityType: string
  readonly entityId: string
  readonly tag: string
  readonly key?: string
}

const where = (sql: SqlClient.SqlClient, m: Stored) =>
  sql`entity_type = ${m.entityType} AND entity_id = ${m.entityId} AND tag = ${m.tag}${
    m.key === undefined ? sql`` : sql` AND payload LIKE ${`%"${m.key}"%`}`
  }`

/** How many such messages are stored, and how many of them were processed. */
export const storedCount = (m: Stored) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ total: number; processed: number }>`
      SELECT count(*)::int AS total, count(*) FILTER (WHERE processed)::int AS processed
      FROM cluster_messages WHERE ${where(sql, m)}`
    return rows[0]!
  }).pipe(Effect.orDie)

/** Waits until the one stored message was processed. */
export const processedOnce = (m: Stored) => eventually(storedCount(m), (c) => c.total === 1 && c.processed === 1)

/** The real cluster delivers the stored message again, once it has run: answers when it has run again. */
export const redeliver = (m: Stored) =>
  Effect.gen(function*() {
    yield* processedOnce(m)
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM cluster_replies WHERE request_id IN (SELECT id FROM cluster_messages WHERE ${where(sql, m)})`
    yield* sql`UPDATE cluster_messages SET processed = false, last_reply_id = NULL, last_read = NULL WHERE ${where(sql, m)}`
    assert.deepStrictEqual(yield* storedCount(m), { total: 1, processed: 0 })
    yield* processedOnce(m)
  }).pipe(Effect.orDie)

/** A count from the database (a query answering `count(*)::int AS n`). */
export const count = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ readonly n: number }>, SqlError.SqlError>) =>
  Effect.flatMap(SqlClient.SqlClient, query).pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie)
