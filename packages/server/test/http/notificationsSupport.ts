/** Helpers of the notifications tests: what a phone was sent, and the inbox copy's read state. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { makeAgent } from "../../../../test/support/server.ts"

export type Agent = Effect.Success<ReturnType<typeof makeAgent>>

/** What the sandbox provider delivered to the device, oldest first. */
export const deliveries = (agent: Agent, deviceId: string) =>
  Effect.map(agent.app.devices.deliveries({ params: { id: deviceId } }), (r) => r.items)

/** When the notification's inbox copy was read (null: unread; undefined: no copy). */
export const inboxReadAt = (notificationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readAt: string | null }>`SELECT read_at FROM inbox_items WHERE item_id = ${notificationId}`).pipe(
    Effect.map((rows) => rows[0]?.readAt)
  )

/** The phone's push token changing under Herald (e.g. the app was reinstalled), as the sandbox sees it. */
export const setPushToken = (deviceId: string, token: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE devices SET push_token = ${token} WHERE id = ${deviceId}`)
