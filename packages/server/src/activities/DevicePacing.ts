/**
 * Start pacing per device, shared by every activity entity of this node:
 * a device gets at most one live-activity start per start interval.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { ActivityConfig } from "../config/ActivityConfig.ts"
import { nextSlot } from "./Pacing.ts"

export class DevicePacing extends Context.Service<DevicePacing, {
  /**
   * The device's next start slot: `now` (and the slot is taken) when a start
   * may go now, else the time it may go.
   */
  readonly takeStartSlot: (deviceId: string, now: number) => number
}>()("herald/DevicePacing") {
  static readonly layer = Layer.effect(DevicePacing, Effect.gen(function*() {
    const interval = Duration.toMillis((yield* ActivityConfig).startInterval)
    const lastStart = new Map<string, number>()
    return DevicePacing.of({
      takeStartSlot: (deviceId, now) => {
        const next = nextSlot(lastStart.get(deviceId), interval, now)
        if (next > now) return next
        lastStart.set(deviceId, now)
        // Forget devices idle for a while, so the map stays bounded.
        if (lastStart.size > 100_000) {
          for (const [id, at] of lastStart) if (now - at > interval) lastStart.delete(id)
        }
        return now
      }
    })
  }))
}
