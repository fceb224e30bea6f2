/** Agent and Person API handlers of prompts. */
import {
  AgentApi,
  AppApi,
  CurrentAgent,
  CurrentPerson,
  InboxInteractionList,
  InteractionCreated,
  InteractionReplay
} from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { Interactions } from "./Interactions.ts"

const list = (items: ReadonlyArray<InboxInteractionList["items"][number]>) =>
  new InboxInteractionList({ items })

export const InteractionsHandlers = HttpApiBuilder.group(AgentApi, "interactions", Effect.fn(function*(handlers) {
  const interactions = yield* Interactions
  const idempotency = yield* Idempotency
  return handlers
    .handle("list", () => Effect.flatMap(CurrentAgent, (agent) => Effect.map(interactions.pending(agent.userId), list)))
    .handle("create", ({ headers, payload }) =>
      Effect.flatMap(CurrentAgent, (agent) =>
        idempotency.create(
          { userId: agent.userId, route: "POST /interactions", key: headers["idempotency-key"], body: payload },
          InteractionCreated,
          interactions.create(agent, payload),
          (value) => new InteractionReplay({ ...value, idempotent: true })
        )))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => interactions.get(agent.tokenId, params.id)))
    .handle("wait", ({ params, query }) =>
      Effect.flatMap(CurrentAgent, (agent) => interactions.wait(agent.tokenId, params.id, query.timeout)))
    .handle("cancel", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => interactions.cancel(agent.tokenId, params.id)))
}))

export const PersonInteractionsHandlers = HttpApiBuilder.group(AppApi, "interactions", Effect.fn(function*(handlers) {
  const interactions = yield* Interactions
  return handlers
    .handle("list", () => Effect.flatMap(CurrentPerson, (person) => Effect.map(interactions.pending(person.userId), list)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentPerson, (person) => interactions.getForPerson(person.userId, params.id)))
    .handle("answer", ({ params, payload }) =>
      Effect.flatMap(CurrentPerson, (person) => interactions.answer(person.userId, params.id, payload)))
}))
