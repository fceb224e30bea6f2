/**
 * SQL of the sandbox push provider: what each device was sent, in
 * `push_sandbox_deliveries(id, device_id, push_type, priority, payload, created_at)`.
 * Ids are `sbx_` + a time-sortable random id; reads are oldest first.
 */
import { SandboxDelivery } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { batched } from "../db/Batching.ts"
import type { PushType } from "./PushMessage.ts"

export interface NewSandboxDelivery {
  readonly id: string
  readonly deviceId: string
  readonly pushType: PushType
  readonly priority: 5 | 10
  readonly payload: Readonly<Record<string, unknown>>
}

/** The most deliveries one listing returns (the latest ones, oldest first). */
export const maxListedDeliveries = 500

export class SandboxRepo extends Context.Service<SandboxRepo, {
  readonly insert: (delivery: NewSandboxDelivery) => Effect.Effect<void, SqlError.SqlError>
  /** The device's deliveries, oldest first (at most the latest `maxListedDeliveries`). */
  readonly listForDevice: (deviceId: string) => Effect.Effect<ReadonlyArray<SandboxDelivery>>
  /**
   * The same, scoped in SQL to the person's own device: none when the device is
   * missing or someone else's.
   */
  readonly listForUserDevice: (userId: string, deviceId: string) => Effect.Effect<Option.Option<ReadonlyArray<SandboxDelivery>>>
}>()("herald/SandboxRepo") {
  static readonly layer = Layer.effect(SandboxRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Concurrent sends share one INSERT (the sandbox stands in for a provider in benchmarks too).
    const insertBatch = batched((deliveries: NonEmptyReadonlyArray<NewSandboxDelivery>) =>
      sql`
        INSERT INTO push_sandbox_deliveries (id, device_id, push_type, priority, payload)
        SELECT id, "deviceId", "pushType", priority, payload
        FROM jsonb_to_recordset(${JSON.stringify(deliveries)}::jsonb)
          AS d(id text, "deviceId" text, "pushType" text, priority int, payload jsonb)`.pipe(
        Effect.as(deliveries.map(() => Option.none<SqlError.SqlError>())),
        Effect.catch((error) => Effect.succeed(deliveries.map(() => Option.some(error))))
      )
    )
    const insert = (delivery: NewSandboxDelivery) =>
      Effect.flatMap(insertBatch(delivery), Option.match({ onNone: () => Effect.void, onSome: Effect.fail }))

    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: SandboxDelivery,
      execute: (deviceId) =>
        sql`SELECT id, push_type, priority, payload, created_at FROM (
              SELECT id, push_type, priority, payload, created_at FROM push_sandbox_deliveries
              WHERE device_id = ${deviceId}
              ORDER BY created_at DESC, id DESC
              LIMIT ${maxListedDeliveries}
            ) latest
            ORDER BY created_at, id`
    })

    const ownsDevice = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, deviceId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ deviceId, userId }) => sql`SELECT id FROM devices WHERE id = ${deviceId} AND user_id = ${userId}`
    })

    const listForDevice = (deviceId: string) =>
      list(deviceId).pipe(Effect.orDie, Effect.withSpan("SandboxRepo.listForDevice"))

    const listForUserDevice = (userId: string, deviceId: string) =>
      ownsDevice({ userId, deviceId }).pipe(
        Effect.orDie,
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed(Option.none<ReadonlyArray<SandboxDelivery>>()),
          onSome: () => Effect.map(listForDevice(deviceId), Option.some)
        })),
        Effect.withSpan("SandboxRepo.listForUserDevice")
      )

    return SandboxRepo.of({ insert, listForDevice, listForUserDevice })
  }))
}
