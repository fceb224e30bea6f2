/**
 * Start pacing per device: a device gets at most one live-activity start per
 * start interval, across every activity on every node. The device's slot is
 * its row's `last_activity_start_at` (migration 0021), taken by one
 * conditional update, so two activities' actors (on one node or two) can
 * never both take it; the same SQL runs on the embedded database. A start
 * is rare next to an update, so its one statement is cheap where it counts.
 * Times are the service clock's, passed in (the actor's clock in tests).
 */
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { ActivityConfig } from "../config/ActivityConfig.ts"

const decodeSlot = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  taken: Schema.Boolean,
  lastStartMs: Schema.NullOr(Schema.Number)
})))

export class DevicePacing extends Context.Service<DevicePacing, {
  /**
   * The device's next start slot: `now` (and the slot is taken) when a start
   * may go now, else the time it may go.
   */
  readonly takeStartSlot: (deviceId: string, now: number) => Effect.Effect<number>
}>()("herald/DevicePacing") {
  static readonly layer = Layer.effect(DevicePacing, Effect.gen(function*() {
    const interval = Duration.toMillis((yield* ActivityConfig).startInterval)
    const sql = yield* SqlClient.SqlClient

    // Not taken, the outer SELECT reads the slot as the statement's snapshot saw it: when the
    // next start may go.
    const take = (deviceId: string, now: number) =>
      sql`
        WITH taken AS (
          UPDATE devices SET last_activity_start_at = to_timestamp(${now}::float8 / 1000)
          WHERE id = ${deviceId}
            AND (last_activity_start_at IS NULL
              OR last_activity_start_at <= to_timestamp((${now}::float8 - ${interval}::float8) / 1000))
          RETURNING id)
        SELECT EXISTS (SELECT 1 FROM taken) AS taken,
          (SELECT (extract(epoch FROM last_activity_start_at) * 1000)::float8 FROM devices WHERE id = ${deviceId}) AS last_start_ms`.pipe(
        Effect.flatMap(decodeSlot),
        Effect.map(([row]) => {
          if (row === undefined || row.taken) return now
          // Refused although the slot read is free (another actor took it since the snapshot), or the
          // device is gone (its operation fails where it is read next): look again shortly.
          return row.lastStartMs === null ? now + 1 : Math.max(row.lastStartMs + interval, now + 1)
        }),
        Effect.orDie
      )

    return DevicePacing.of({
      // No interval, no pacing: nothing to keep.
      takeStartSlot: interval <= 0 ? (_deviceId, now) => Effect.succeed(now) : take
    })
  }))
}
