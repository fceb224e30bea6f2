/**
 * The stack's floor under `POST /api/agent/notifications`: the raw floor's
 * work (notifications-floor.ts, the same statements from floor-sql.ts) on the
 * stack Herald must be built on, a bare Effect `HttpApi` server and
 * `@effect/sql-pg`, with Effect's request batching for the group commit. No
 * authentication middleware, logging, metrics, inbox copy, feed entry or
 * idempotency: what remains is the stack's own cost of that work.
 *
 * argv: databaseUrl port (0 = any); prints the port, then serves.
 */
import { Effect, Layer, Schema } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { batched } from "../../packages/server/src/db/Batching.ts"
import { bareServer, databaseFloorArgs, runPrintingPort } from "./bareServer.ts"
import { floorMessage, floorSetup, floorSql, floorToken, floorUserId } from "./floor-sql.ts"

const Created = Schema.Struct({
  notification: Schema.Struct({
    id: Schema.String,
    title: Schema.String,
    body: Schema.String,
    url: Schema.NullOr(Schema.String),
    createdAt: Schema.String
  }),
  accepted: Schema.Number
})

const Api = HttpApi.make("floor").add(
  HttpApiGroup.make("notifications").add(
    HttpApiEndpoint.post("send", "/notifications", {
      headers: { authorization: Schema.Literal(`Bearer ${floorToken}`) },
      payload: Schema.Struct({ title: Schema.String, body: Schema.String, url: Schema.optionalKey(Schema.String) }),
      success: Created.pipe(HttpApiSchema.status(201))
    })
  )
)

interface Device { readonly id: string; readonly user_id: string }
interface Receipt { readonly id: string; readonly item_id: string; readonly device_id: string; readonly message: unknown }
interface Draft { readonly id: string; readonly title: string; readonly body: string; readonly url: string | null }

const Handlers = HttpApiBuilder.group(Api, "notifications", Effect.fn(function*(handlers) {
  const sql = yield* SqlClient.SqlClient
  yield* Effect.forEach(floorSetup, (statement) => sql.unsafe(statement), { discard: true }).pipe(Effect.orDie)

  const devicesOf = batched((users: NonEmptyReadonlyArray<string>) =>
    Effect.map(sql.unsafe<Device>(floorSql.devices, [[...new Set(users)]]), (rows) =>
      users.map((u) => rows.filter((d) => d.user_id === u))).pipe(Effect.orDie))

  const commit = batched((drafts: NonEmptyReadonlyArray<{ readonly draft: Draft; readonly receipts: ReadonlyArray<Receipt> }>) =>
    sql.unsafe(floorSql.commit, [
      JSON.stringify(drafts.map((d) => d.draft)),
      JSON.stringify(drafts.flatMap((d) => d.receipts)),
      floorUserId
    ]).pipe(Effect.as(drafts.map(() => undefined)), Effect.orDie))

  const claim = batched((lists: NonEmptyReadonlyArray<ReadonlyArray<string>>) =>
    Effect.map(sql.unsafe<Receipt>(floorSql.claim, [lists.flat()]), (rows) => {
      const byId = new Map(rows.map((r) => [r.id, r]))
      return lists.map((ids) => ids.flatMap((id) => byId.get(id) ?? []))
    }).pipe(Effect.orDie))

  // The sandbox provider: it records what it would have sent.
  const deliver = batched((receipts: NonEmptyReadonlyArray<Receipt>) => {
    const deliveries = receipts.map((r) => ({ id: `sbx_${randomUUID()}`, device_id: r.device_id, payload: r.message }))
    return sql.unsafe(floorSql.deliver, [JSON.stringify(deliveries)]).pipe(Effect.as(deliveries.map((d) => d.id)), Effect.orDie)
  })

  const record = batched((answers: NonEmptyReadonlyArray<{ readonly id: string; readonly providerId: string }>) =>
    sql.unsafe(floorSql.record, [
      JSON.stringify(answers.map((a) => ({ id: a.id, provider_id: a.providerId }))),
      answers.map((a) => a.id)
    ]).pipe(Effect.as(answers.map(() => undefined)), Effect.orDie))

  return handlers.handle("send", ({ payload }) =>
    Effect.gen(function*() {
      const devices = yield* devicesOf(floorUserId)
      const draft: Draft = { id: `anot_${randomUUID()}`, title: payload.title, body: payload.body, url: payload.url ?? null }
      const message = floorMessage(draft)
      const receipts = devices.map((d) => ({ id: `rcp_${randomUUID()}`, item_id: draft.id, device_id: d.id, message }))
      yield* commit({ draft, receipts })
      const claimed = yield* claim(receipts.map((r) => r.id))
      yield* Effect.forEach(claimed, (r) => Effect.flatMap(deliver(r), (providerId) => record({ id: r.id, providerId })), {
        concurrency: "unbounded",
        discard: true
      })
      return { notification: { ...draft, createdAt: new Date().toISOString() }, accepted: claimed.length }
    }))
}))

const { database, port } = databaseFloorArgs("herald-effect-floor")
runPrintingPort(bareServer(HttpApiBuilder.layer(Api).pipe(Layer.provide(Handlers)), port).pipe(Layer.provide(database)), port)
