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
      Effect.flatMap(CurrentAgent, (agent) => {
        const start = activities.start(agent, payload)
        const key = headers["idempotency-key"]
        if (key === undefined) return start
        return idempotency.run({ userId: agent.userId, route: "POST /activities", key, body: payload }, LiveActivityMutation, start).pipe(
          Effect.map(({ replayed, value }) =>
            replayed ? new LiveActivityReplay({ ...value, idempotent: true }, { disableChecks: true }) : value
          )
        )
      }))
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
