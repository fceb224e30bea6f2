/** What the live-activity HTTP tests share: an agent's phones, its starts, and what the sandbox sent a device. */
import { Effect } from "effect"
import type { makeAgent } from "../../../../test/support/server.ts"

export type Agent = Effect.Success<ReturnType<typeof makeAgent>>

export const scopes = ["activities:read", "activities:write"] as const

let seq = 0
/** A live-activity-capable phone; iOS ones with a push-to-start token (`pushToStart` picks its sandbox behaviour). */
export const phone = (agent: Agent, platform: "ios" | "android", options: { readonly pushToken?: string; readonly pushToStart?: string } = {}) =>
  Effect.gen(function*() {
    const device = yield* agent.app.devices.register({
      payload: { platform, pushToken: options.pushToken ?? `la-${platform}-${++seq}-${Date.now()}`, liveActivitiesCapable: true }
    })
    if (platform === "ios") {
      yield* agent.app.devices.pushToStartToken({
        params: { id: device.id },
        payload: { token: options.pushToStart ?? `pts-${++seq}-${Date.now()}` }
      })
    }
    return device
  })

export interface Sent {
  readonly event: string
  readonly priority: number
  readonly state: Record<string, unknown>
}

/** What the sandbox sent a device for live activities, in order. */
export const sent = (agent: Agent, deviceId: string) =>
  Effect.map(agent.app.devices.deliveries({ params: { id: deviceId } }), (r) =>
    r.items.flatMap((d): Array<Sent> => {
      const payload = d.payload as { aps?: Record<string, unknown>; data?: Record<string, string> }
      if (d.pushType === "liveactivity" && payload.aps !== undefined) {
        return [{ event: String(payload.aps.event), priority: d.priority, state: payload.aps["content-state"] as Record<string, unknown> }]
      }
      if (payload.data?.type === "live_activity") {
        return [{ event: payload.data.event!, priority: d.priority, state: JSON.parse(payload.data.state!) }]
      }
      return []
    }))

export const start = (agent: Agent, payload: Parameters<Agent["client"]["activities"]["start"]>[0]["payload"]) =>
  agent.client.activities.start({ payload })
