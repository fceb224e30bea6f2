/** Person API handlers of web apps: the apps the person can open, their own sign-in consent and disclosure choices. */
import { AppApi, AppList, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Apps } from "./Apps.ts"

export const PersonAppsHandlers = HttpApiBuilder.group(AppApi, "apps", Effect.fn(function*(handlers) {
  const apps = yield* Apps
  return handlers
    .handle("list", () => Effect.flatMap(CurrentPerson, (person) => apps.list(person.userId)).pipe(Effect.map((items) => new AppList({ items }))))
    .handle("get", ({ params }) => Effect.flatMap(CurrentPerson, (person) => apps.get(person.userId, params.id)))
    .handle("consent", ({ params }) => Effect.flatMap(CurrentPerson, (person) => apps.consent(person.userId, params.id)))
    .handle("preferences", ({ params, payload }) =>
      Effect.flatMap(CurrentPerson, (person) => apps.preferences(person.userId, params.id, payload)))
}))
