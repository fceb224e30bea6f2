/** Agent API handlers of web apps (the "apps" group, with `GET /teams/{id}/apps`). */
import { AgentApi, AppList, CurrentAgent, ok } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { agentActor } from "../teams/AuditTrail.ts"
import { Apps } from "./Apps.ts"

export const AppsHandlers = HttpApiBuilder.group(AgentApi, "apps", Effect.fn(function*(handlers) {
  const apps = yield* Apps
  return handlers
    .handle("list", () =>
      Effect.flatMap(CurrentAgent, (agent) => apps.list(agent.userId)).pipe(Effect.map((items) => new AppList({ items }))))
    .handle("create", ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => apps.create(agent.userId, payload)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => apps.get(agent.userId, params.id)))
    .handle("update", ({ params, payload }) =>
      Effect.flatMap(CurrentAgent, (agent) => apps.update(agent.userId, params.id, payload)))
    .handle("remove", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => apps.remove(agent.userId, params.id)).pipe(Effect.as(ok)))
    .handle("revoke", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => apps.revoke(agent.userId, params.id)))
    .handle("share", ({ params, payload }) =>
      Effect.flatMap(agentActor, (actor) =>
        apps.share({ ...actor, userId: actor.userId! }, params.id, payload.teamId, payload.notify ?? true)))
    .handle("teamApps", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => apps.teamApps(agent.userId, params.id)).pipe(
        Effect.map((items) => new AppList({ items }))
      ))
}))
