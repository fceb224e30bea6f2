/** Person API handlers of the e-mail channel (`/api/app/me/email-channel`): decode → EmailChannels → encode. */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { EmailChannels } from "./EmailChannels.ts"

export const PersonEmailChannelHandlers = HttpApiBuilder.group(AppApi, "emailChannel", Effect.fn(function*(handlers) {
  const channels = yield* EmailChannels
  return handlers
    .handle("get", () => Effect.flatMap(CurrentPerson, (person) => channels.get(person.userId)))
    .handle("put", ({ payload }) => Effect.flatMap(CurrentPerson, (person) => channels.put(person.userId, payload)))
}))
