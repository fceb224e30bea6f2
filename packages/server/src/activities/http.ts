/** Agent and Person API handlers of live activities. */
import { AgentApi, AppApi, CurrentAgent, CurrentPerson, LiveActivityMutation, LiveActivityReplay, ok } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { LiveActivities } from "./LiveActivities.ts"

export const ActivitiesHandlers = HttpApiBuilder.group(AgentApi, "activities", Effect.fn(function*(handlers) {
  const activities = yield* LiveActivities
  const idempotency = yield* Idempotency
  return handlers
    .handle("list", () => Effect.flatMap(CurrentAgent, (agent) => activities.list(agent.tokenId)))
    .handle("start", ({ headers, payload }) =>
      Effect.flatMap(CurrentAgent, (agent) =>
        idempotency.create(
          { userId: agent.userId, route: "POST /activities", key: headers["idempotency-key"], body: payload },
          LiveActivityMutation,
          activities.start(agent, payload),
          (value) => new LiveActivityReplay({ ...value, idempotent: true }, { disableChecks: true })
        )))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => activities.get(agent.tokenId, params.identifier)))
    .handle("update", ({ params, payload }) =>
      Effect.flatMap(CurrentAgent, (agent) => activities.update(agent.tokenId, params.identifier, payload)))
    .handle("end", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => activities.end(agent.tokenId, params.identifier)))
}))

export const PersonActivitiesHandlers = HttpApiBuilder.group(AppApi, "activities", Effect.fn(function*(handlers) {
  const activities = yield* LiveActivities
  return handlers
    .handle("list", () => Effect.flatMap(CurrentPerson, (person) => activities.listForPerson(person.userId)))
    .handle("updateToken", ({ params, payload }) =>
      Effect.flatMap(CurrentPerson, (person) =>
        activities.registerUpdateToken(person.userId, params.id, payload.deviceId, payload.token)).pipe(Effect.as(ok)))
}))
