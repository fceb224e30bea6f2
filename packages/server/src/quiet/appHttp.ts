/** Person API handlers of quiet hours (`/api/app/me/quiet-hours`): decode → QuietHours → encode. */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { QuietHours } from "./QuietHours.ts"

export const PersonQuietHoursHandlers = HttpApiBuilder.group(AppApi, "quietHours", Effect.fn(function*(handlers) {
  const quiet = yield* QuietHours
  return handlers
    .handle("get", () => Effect.flatMap(CurrentPerson, (person) => quiet.get(person.userId)))
    .handle("put", ({ payload }) => Effect.flatMap(CurrentPerson, (person) => quiet.put(person.userId, payload)))
    .handle("mute", ({ payload }) => Effect.flatMap(CurrentPerson, (person) => quiet.mute(person.userId, payload.hours)))
    .handle("unmute", () => Effect.flatMap(CurrentPerson, (person) => quiet.unmute(person.userId)))
}))
