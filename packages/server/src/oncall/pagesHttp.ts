/** Agent API handlers of pages. */
import { AgentApi, CurrentAgent, PageOutcome, PageReplay } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { agentActor } from "../teams/AuditTrail.ts"
import { Pages } from "./Pages.ts"
import type { PageInput } from "./Pages.ts"

/**
 * Creates a page under the `Idempotency-Key` rules (decisions.md), the key also
 * being the page's dedup key. Shared with POST /notifications with `oncall`.
 */
export const createPage = (
  services: { readonly pages: Pages["Service"]; readonly idempotency: Idempotency["Service"] },
  request: { readonly route: string; readonly groupId: string; readonly input: PageInput; readonly key: string | undefined; readonly body: unknown }
) =>
  Effect.gen(function*() {
    const { idempotency, pages } = services
    const { body, groupId, input, key, route } = request
    const agent = yield* CurrentAgent
    const actor = yield* agentActor
    return yield* idempotency.create(
      { userId: agent.userId, route, key, body },
      PageOutcome,
      pages.create(agent, actor, groupId, input, key),
      (value) => new PageReplay({ page: value.page, deduplicated: value.deduplicated, idempotent: true })
    )
  })

export const PagesHandlers = HttpApiBuilder.group(AgentApi, "pages", Effect.fn(function*(handlers) {
  const pages = yield* Pages
  const idempotency = yield* Idempotency
  return handlers
    .handle("create", ({ headers, params, payload }) =>
      createPage({ pages, idempotency }, {
        route: "POST /oncall/{groupId}/pages",
        groupId: params.groupId,
        input: payload,
        key: headers["idempotency-key"],
        body: { groupId: params.groupId, ...payload }
      }))
    .handle("list", ({ params, query }) => Effect.flatMap(CurrentAgent, (agent) => pages.list(agent.userId, params.id, query)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => pages.get(agent.userId, params.id)))
    .handle("resolve", ({ params }) =>
      Effect.flatMap(agentActor, (actor) => pages.resolve({ ...actor, userId: actor.userId! }, params.id)))
}))
