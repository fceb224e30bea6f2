/** Agent API handlers of the notifications capability. */
import { AgentApi, AgentNotificationCreated, AgentNotificationReplay, CurrentAgent } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { Notifications } from "./Notifications.ts"

export const NotificationsHandlers = HttpApiBuilder.group(AgentApi, "notifications", Effect.fn(function*(handlers) {
  const notifications = yield* Notifications
  const idempotency = yield* Idempotency
  return handlers
    .handle("create", ({ headers, payload }) =>
      Effect.flatMap(CurrentAgent, (agent) => {
        const send = notifications.send(agent, payload)
        const key = headers["idempotency-key"]
        if (key === undefined) return send
        return idempotency.run({ userId: agent.userId, route: "POST /notifications", key, body: payload }, AgentNotificationCreated, send).pipe(
          Effect.map(({ replayed, value }) =>
            replayed ? new AgentNotificationReplay({ ...value, idempotent: true }) : value
          )
        )
      }))
    .handle("withdraw", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => notifications.withdraw(agent.userId, params.id)))
}))
