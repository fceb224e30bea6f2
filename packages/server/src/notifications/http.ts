/** Agent API handlers of the notifications capability. */
import { AgentApi, AgentNotificationCreated, AgentNotificationReplay, CurrentAgent, MissingScope } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { Pages } from "../oncall/Pages.ts"
import { createPage } from "../oncall/pagesHttp.ts"
import { Notifications } from "./Notifications.ts"

export const NotificationsHandlers = HttpApiBuilder.group(AgentApi, "notifications", Effect.fn(function*(handlers) {
  const notifications = yield* Notifications
  const idempotency = yield* Idempotency
  const pages = yield* Pages
  return handlers
    .handle("create", ({ headers, payload }) =>
      Effect.gen(function*() {
        const agent = yield* CurrentAgent
        const key = headers["idempotency-key"]
        if (payload.oncall !== undefined) {
          // decisions.md: paging through POST /notifications needs `oncall:write` as well.
          if (!agent.scopes.includes("oncall:write")) {
            return yield* new MissingScope({ error: "The token lacks scopes: oncall:write.", required: ["oncall:write"] })
          }
          const input = { title: payload.title, body: payload.body, url: payload.url, ...(payload.appId !== undefined ? { appId: payload.appId } : {}) }
          return yield* createPage({ pages, idempotency }, { route: "POST /notifications", groupId: payload.oncall, input, key, body: payload })
        }
        return yield* idempotency.create(
          { userId: agent.userId, route: "POST /notifications", key, body: payload },
          AgentNotificationCreated,
          notifications.send(agent, payload),
          (value) => new AgentNotificationReplay({ ...value, idempotent: true })
        )
      }))
    .handle("withdraw", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => notifications.withdraw(agent.userId, params.id)))
}))
