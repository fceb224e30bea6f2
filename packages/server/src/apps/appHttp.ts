/** Person API handlers of web apps: the signed-in person's own sign-in consent and disclosure choices. */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Apps } from "./Apps.ts"

export const PersonAppsHandlers = HttpApiBuilder.group(AppApi, "apps", Effect.fn(function*(handlers) {
  const apps = yield* Apps
  return handlers
    .handle("consent", ({ params }) => Effect.flatMap(CurrentPerson, (person) => apps.consent(person.userId, params.id)))
    .handle("preferences", ({ params, payload }) =>
      Effect.flatMap(CurrentPerson, (person) => apps.preferences(person.userId, params.id, payload)))
}))
