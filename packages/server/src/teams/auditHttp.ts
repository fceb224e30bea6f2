/**
 * Agent API handler of a team's audit log. `format=csv` answers a streamed
 * response built here (the endpoint still declares the CSV body, so the
 * OpenAPI shows both content types); the default is the JSON page.
 */
import { AgentApi, CurrentAgent } from "@herald/api"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AuditLog } from "./AuditLog.ts"

export const AuditHandlers = HttpApiBuilder.group(AgentApi, "audit", Effect.fn(function*(handlers) {
  const audit = yield* AuditLog
  return handlers.handle("list", ({ params, query }) =>
    Effect.gen(function*() {
      const agent = yield* CurrentAgent
      if (query.format !== "csv") return yield* audit.page(agent.userId, params.id, query)
      const { body, truncated } = yield* audit.csv(agent.userId, params.id, query)
      return HttpServerResponse.stream(body, {
        contentType: "text/csv; charset=utf-8",
        headers: {
          "content-disposition": `attachment; filename="audit-${params.id}.csv"`,
          ...(truncated ? { "x-audit-truncated": "true" } : {})
        }
      })
    }))
}))
