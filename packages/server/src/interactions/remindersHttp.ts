/** Person API handlers of a person's default reminders (`GET/PUT /me/reminders`). */
import { AppApi, CurrentPerson, ReminderDefaults } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Reminders } from "./Reminders.ts"

export const PersonRemindersHandlers = HttpApiBuilder.group(AppApi, "reminders", Effect.fn(function*(handlers) {
  const reminders = yield* Reminders
  const answer = (remind: ReminderDefaults["remind"]) => new ReminderDefaults({ remind })
  return handlers
    .handle("get", () => Effect.flatMap(CurrentPerson, (person) => Effect.map(reminders.defaults(person.userId), answer)))
    .handle("put", ({ payload }) =>
      Effect.flatMap(CurrentPerson, (person) => Effect.map(reminders.setDefaults(person.userId, payload.remind), answer)))
}))
