/** Person API handler of the on-call overview: who is on call in the person's teams, their shifts and pages. */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Groups } from "./Groups.ts"

export const PersonOncallHandlers = HttpApiBuilder.group(AppApi, "oncall", Effect.fn(function*(handlers) {
  const groups = yield* Groups
  return handlers.handle("get", () => Effect.flatMap(CurrentPerson, (person) => groups.overview(person.userId)))
}))
