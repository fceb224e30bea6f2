/** Agent API handlers of the identity capability: decode → service → encode. */
import { AgentApi, CurrentAgent, DeviceList, ok } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Identity } from "./Identity.ts"

export const AuthHandlers = HttpApiBuilder.group(AgentApi, "auth", Effect.fn(function*(handlers) {
  const identity = yield* Identity
  return handlers
    .handle("status", () => Effect.map(CurrentAgent, identity.tokenStatus))
    .handle("revoke", () =>
      Effect.flatMap(CurrentAgent, (agent) => identity.revokeToken(agent.userId, agent.tokenId)).pipe(
        Effect.orDie,
        Effect.as(ok)
      ))
}))

export const TokensHandlers = HttpApiBuilder.group(AgentApi, "tokens", Effect.fn(function*(handlers) {
  const identity = yield* Identity
  return handlers
    .handle("list", ({ query }) => Effect.flatMap(CurrentAgent, (agent) => identity.listTokens(agent.userId, query)))
    .handle("revoke", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => identity.revokeToken(agent.userId, params.id)).pipe(Effect.as(ok)))
}))

export const DevicesHandlers = HttpApiBuilder.group(AgentApi, "devices", Effect.fn(function*(handlers) {
  const identity = yield* Identity
  return handlers
    .handle("list", () =>
      Effect.flatMap(CurrentAgent, (agent) => identity.listDevices(agent.userId)).pipe(
        Effect.map((items) => new DeviceList({ items }))
      ))
    .handle("remove", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => identity.removeDevice(agent.userId, params.id)).pipe(Effect.as(ok)))
}))
