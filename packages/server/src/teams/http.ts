/** Agent API handlers of teams and families and their membership. */
import { AgentApi, CurrentAgent, ok, TeamList } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { agentActor } from "./AuditTrail.ts"
import { Teams } from "./Teams.ts"

export const TeamsHandlers = HttpApiBuilder.group(AgentApi, "teams", Effect.fn(function*(handlers) {
  const teams = yield* Teams
  // The caller's account and the audit actor of its request.
  const caller = Effect.all({ agent: CurrentAgent, actor: agentActor })
  return handlers
    .handle("list", () =>
      Effect.flatMap(CurrentAgent, (agent) => teams.list(agent.userId)).pipe(Effect.map((items) => new TeamList({ items }))))
    .handle("create", ({ payload }) =>
      Effect.flatMap(caller, ({ actor, agent }) => teams.createFamily(actor, agent.userId, payload)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => teams.detail(agent.userId, params.id)))
    .handle("update", ({ params, payload }) =>
      Effect.flatMap(caller, ({ actor, agent }) => teams.update(actor, agent.userId, params.id, payload)))
    .handle("remove", ({ params }) =>
      Effect.flatMap(caller, ({ actor, agent }) => teams.remove(actor, agent.userId, params.id)).pipe(Effect.as(ok)))
    .handle("leave", ({ params }) =>
      Effect.flatMap(caller, ({ actor, agent }) => teams.leave(actor, agent.userId, params.id)).pipe(Effect.as(ok)))
    .handle("updateMember", ({ params, payload }) =>
      Effect.flatMap(caller, ({ actor, agent }) => teams.setRole(actor, agent.userId, params.id, params.userId, payload.role)))
    .handle("removeMember", ({ params }) =>
      Effect.flatMap(caller, ({ actor, agent }) => teams.removeMember(actor, agent.userId, params.id, params.userId)).pipe(
        Effect.as(ok)
      ))
}))
