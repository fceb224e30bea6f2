/** Agent API handlers of webhook services and of history (events and the activity feed). */
import { AgentApi, CurrentAgent, ok, ServiceCreated, ServiceList } from "@herald/api"
import type { AgentService } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { agentActor } from "../teams/AuditTrail.ts"
import { WatchSettings } from "../watch/WatchSettings.ts"
import { Services } from "./Services.ts"

export const ServicesHandlers = HttpApiBuilder.group(AgentApi, "services", Effect.fn(function*(handlers) {
  const services = yield* Services
  const watches = yield* WatchSettings
  // Every record carries its dead-man's switch (`watch`, null when none): docs/dead-mans-switch.md.
  const withWatch = <S extends AgentService>(service: S) => Effect.map(watches.attach([service]), ([s]) => s!)
  // A change to a shared service is audited in its family's log, naming the agent and its token.
  const caller = Effect.all({ agent: CurrentAgent, actor: agentActor })
  return handlers
    .handle("list", () =>
      Effect.flatMap(CurrentAgent, (agent) => services.list(agent.userId)).pipe(
        Effect.flatMap(watches.attach),
        Effect.map((items) => new ServiceList({ items }))
      ))
    .handle("create", ({ payload }) =>
      Effect.flatMap(CurrentAgent, (agent) => services.create(agent.userId, payload)).pipe(
        Effect.flatMap((created) =>
          Effect.map(withWatch(created.service), (service) => new ServiceCreated({ ...created, service })))
      ))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => services.get(agent.userId, params.id)).pipe(Effect.flatMap(withWatch)))
    .handle("update", ({ params, payload }) =>
      Effect.flatMap(caller, ({ actor, agent }) => services.update(actor, agent.userId, params.id, payload)).pipe(Effect.flatMap(withWatch)))
    .handle("remove", ({ params }) =>
      Effect.flatMap(caller, ({ actor, agent }) => services.remove(actor, agent.userId, params.id)).pipe(Effect.as(ok)))
    .handle("share", ({ params, payload }) =>
      Effect.flatMap(caller, ({ actor, agent }) => services.share(actor, agent.userId, params.id, payload.familyId)).pipe(Effect.flatMap(withWatch)))
    .handle("rotate", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => services.rotate(agent.userId, params.id)).pipe(
        Effect.flatMap((created) =>
          Effect.map(withWatch(created.service), (service) => new ServiceCreated({ ...created, service })))
      ))
}))

/** decisions.md: GET /events `limit` defaults to 50. */
const DEFAULT_EVENTS = 50

export const HistoryHandlers = HttpApiBuilder.group(AgentApi, "history", Effect.fn(function*(handlers) {
  const services = yield* Services
  const feed = yield* ActivityFeed
  return handlers
    .handle("events", ({ query }) =>
      Effect.flatMap(CurrentAgent, (agent) => services.events(agent.userId, query.limit ?? DEFAULT_EVENTS)))
    .handle("activityFeed", ({ query }) => Effect.flatMap(CurrentAgent, (agent) => feed.page(agent.userId, query.page ?? 1)))
}))
