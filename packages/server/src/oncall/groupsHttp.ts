/** Agent API handlers of on-call groups and overrides. */
import { AgentApi, CurrentAgent, ok } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { agentActor } from "../teams/AuditTrail.ts"
import { Groups } from "./Groups.ts"

/** The calling account, and the audit log's actor for it (token, address, user agent). */
const caller = Effect.gen(function*() {
  const agent = yield* CurrentAgent
  return { userId: agent.userId, actor: yield* agentActor }
})

export const OncallGroupsHandlers = HttpApiBuilder.group(AgentApi, "oncall", Effect.fn(function*(handlers) {
  const groups = yield* Groups
  return handlers
    .handle("list", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => groups.list(agent.userId, params.id)))
    .handle("create", ({ params, payload }) => Effect.flatMap(caller, (c) => groups.create(c, params.id, payload)))
    .handle("me", () => Effect.flatMap(CurrentAgent, (agent) => groups.me(agent.userId)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => groups.get(agent.userId, params.groupId)))
    .handle("update", ({ params, payload }) => Effect.flatMap(caller, (c) => groups.update(c, params.groupId, payload)))
    .handle("remove", ({ params }) => Effect.flatMap(caller, (c) => groups.remove(c, params.groupId)).pipe(Effect.as(ok)))
    .handle("createOverride", ({ params, payload }) =>
      Effect.flatMap(caller, (c) => groups.createOverride(c, params.groupId, payload)))
    .handle("removeOverride", ({ params }) =>
      Effect.flatMap(caller, (c) => groups.removeOverride(c, params.groupId, params.overrideId)).pipe(Effect.as(ok)))
}))
