/** Agent API handlers of tunnel connectors. */
import { AgentApi, CurrentAgent, ok } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Callbacks } from "./Callbacks.ts"
import { Connectors } from "./Connectors.ts"
import { Passes } from "./Passes.ts"
import { PendingDeliveries } from "./PendingDeliveries.ts"

const withUser = <A, E, R>(f: (userId: string) => Effect.Effect<A, E, R>) => Effect.flatMap(CurrentAgent, (agent) => f(agent.userId))

export const ConnectorsHandlers = HttpApiBuilder.group(AgentApi, "connectors", Effect.fn(function*(handlers) {
  const connectors = yield* Connectors
  const passes = yield* Passes
  const callbacks = yield* Callbacks
  const pending = yield* PendingDeliveries
  return handlers
    .handle("list", () => withUser((u) => connectors.list(u)))
    .handle("create", ({ payload }) => withUser((u) => connectors.create(u, payload)))
    .handle("get", ({ params }) => withUser((u) => connectors.get(u, params.id)))
    .handle("update", ({ params, payload }) => withUser((u) => connectors.update(u, params.id, payload)))
    .handle("remove", ({ params }) => withUser((u) => connectors.remove(u, params.id)).pipe(Effect.as(ok)))
    .handle("heartbeat", ({ params }) => withUser((u) => connectors.heartbeat(u, params.id)))
    .handle("access", ({ params, payload }) => withUser((u) => passes.access(u, params.id, payload)))
    .handle("callbackAccess", ({ params, payload }) => withUser((u) => callbacks.authorize(u, params.id, payload)))
    .handle("deliveries", ({ params, query }) => withUser((u) => pending.list(u, params.id, query.limit)))
    .handle("rotateSecret", ({ params }) => withUser((u) => connectors.rotateSecret(u, params.id)))
}))
