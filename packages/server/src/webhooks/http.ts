/** Agent API handlers of reply webhooks. */
import { AgentApi, CurrentAgent, ok } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ReplyWebhooks } from "./ReplyWebhooks.ts"

export const WebhooksHandlers = HttpApiBuilder.group(AgentApi, "webhooks", Effect.fn(function*(handlers) {
  const webhooks = yield* ReplyWebhooks
  return handlers
    .handle("list", () => Effect.flatMap(CurrentAgent, (agent) => webhooks.list(agent.userId)))
    .handle("create", ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => webhooks.create(agent.userId, payload)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => webhooks.get(agent.userId, params.id)))
    .handle("update", ({ params, payload }) =>
      Effect.flatMap(CurrentAgent, (agent) => webhooks.update(agent.userId, params.id, payload)))
    .handle("remove", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => webhooks.remove(agent.userId, params.id)).pipe(Effect.as(ok)))
    .handle("test", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => webhooks.test(agent.userId, params.id)))
    .handle("rotateSecret", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => webhooks.rotateSecret(agent.userId, params.id)))
}))
