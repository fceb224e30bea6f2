/** Agent API handlers of the notifications capability. */
import { AgentApi, CurrentAgent } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Notifications } from "./Notifications.ts"

export const NotificationsHandlers = HttpApiBuilder.group(AgentApi, "notifications", Effect.fn(function*(handlers) {
  const notifications = yield* Notifications
  return handlers
    .handle("create", ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => notifications.send(agent, payload)))
    .handle("withdraw", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => notifications.withdraw(agent.userId, params.id)))
}))
