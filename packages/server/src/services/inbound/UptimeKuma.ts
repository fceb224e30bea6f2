/**
 * `uptime-kuma` (its webhook notification, "application/json" body):
 * `{heartbeat, monitor, msg}`. A heartbeat of status 0 (down) fires the
 * monitor's alert, 1 (up) resolves it; the monitor's id is the alert's
 * identity. Its test message carries neither heartbeat nor monitor.
 */
import type { Mapped, Refusal } from "./Inbound.ts"
import { field, finish, first, isRecord, str } from "./Inbound.ts"

export const mapUptimeKuma = (value: unknown): Mapped | Refusal => {
  const v = isRecord(value) ? value : {}
  const status = field(v.heartbeat, "status")
  const name = first(field(v.monitor, "name"), field(v.monitor, "pathName"))
  const id = str(field(v.monitor, "id"))
  const down = status === 0
  const up = status === 1
  return finish("uptime-kuma", {
    title: name === undefined ? "Uptime Kuma" : `${name} is ${down ? "down" : up ? "up" : status === 2 ? "pending" : status === 3 ? "in maintenance" : "reporting"}`,
    body: first(v.msg, field(v.heartbeat, "msg")) ?? "",
    url: first(field(v.monitor, "url")) ?? null,
    priority: down ? "high" : status === 3 ? "low" : v.heartbeat === null || v.heartbeat === undefined ? "low" : "normal",
    alertKey: id === undefined || !(down || up) ? null : `monitor:${id}`,
    state: down ? "firing" : up ? "resolved" : null
  }, value, { strict: false })
}
