/** Person API handler of mini-app packages: one of the person's packages for its install page (`installUrl`). */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Packages } from "./Packages.ts"

export const PersonMiniAppsHandlers = HttpApiBuilder.group(AppApi, "miniApps", Effect.fn(function*(handlers) {
  const packages = yield* Packages
  return handlers.handle("get", ({ params }) => Effect.flatMap(CurrentPerson, (person) => packages.inspect(person.userId, params.packageId)))
}))
