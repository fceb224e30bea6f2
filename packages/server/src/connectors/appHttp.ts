/** Person API handlers of tunnel connectors: one-time gateway passes. */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Passes } from "./Passes.ts"

export const PersonConnectorsHandlers = HttpApiBuilder.group(AppApi, "connectors", Effect.fn(function*(handlers) {
  const passes = yield* Passes
  return handlers.handle("issuePass", ({ params }) => Effect.flatMap(CurrentPerson, (person) => passes.issue(person.userId, params.id)))
}))
