/** Agent API handlers of the inbox: decode → service → encode. */
import { AgentApi, CurrentAgent } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Inbox } from "./Inbox.ts"

export const InboxHandlers = HttpApiBuilder.group(AgentApi, "inbox", Effect.fn(function*(handlers) {
  const inbox = yield* Inbox
  return handlers
    .handle("projects", () => Effect.flatMap(CurrentAgent, (agent) => inbox.projects(agent.userId)))
    .handle("list", ({ query }) => Effect.flatMap(CurrentAgent, (agent) => inbox.list(agent.userId, query)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => inbox.get(agent.userId, params.id)))
    .handle("read", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => inbox.markRead(agent.userId, params.id)))
    .handle("unread", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => inbox.markUnread(agent.userId, params.id)))
    .handle("readAll", ({ payload }) =>
      Effect.flatMap(CurrentAgent, (agent) => inbox.readAll(agent.userId, payload.readThroughToken)))
}))
