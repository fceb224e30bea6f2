/** Agent API handlers of device groups and of a team's member devices. */
import { AgentApi, CurrentAgent, ok } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { agentActor } from "./AuditTrail.ts"
import { DeviceGroups } from "./DeviceGroups.ts"

/** The calling account, and the audit log's actor for it (token, address, user agent). */
const caller = Effect.gen(function*() {
  const agent = yield* CurrentAgent
  return { userId: agent.userId, actor: yield* agentActor }
})

export const DeviceGroupsHandlers = HttpApiBuilder.group(AgentApi, "deviceGroups", Effect.fn(function*(handlers) {
  const groups = yield* DeviceGroups
  return handlers
    .handle("list", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => groups.list(agent.userId, params.id)))
    .handle("create", ({ params, payload }) => Effect.flatMap(caller, (c) => groups.create(c, params.id, payload)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => groups.get(agent.userId, params.id, params.groupId)))
    .handle("update", ({ params, payload }) =>
      Effect.flatMap(caller, (c) => groups.update(c, params.id, params.groupId, payload)))
    .handle("remove", ({ params }) =>
      Effect.flatMap(caller, (c) => groups.remove(c, params.id, params.groupId)).pipe(Effect.as(ok)))
    .handle("devices", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => groups.devices(agent.userId, params.id)))
}))
