/**
 * A person's default reminders (Person API): the schedule a prompt uses when
 * its creator gave no `remind` (docs/prompts-and-activities.md#reminders).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { REMIND_EVERY_MAX_SECONDS, REMIND_EVERY_MIN_SECONDS, REMIND_TIMES_MAX, ReminderSchedule } from "../domain/Interactions.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"

/** The person's default reminders; `remind: null` when they set none (the default). */
export class ReminderDefaults extends Schema.Class<ReminderDefaults>("ReminderDefaults")({
  remind: Schema.NullOr(ReminderSchedule)
}) {}

export const PutReminderDefaultsRequest = Schema.Struct({
  remind: Schema.NullOr(ReminderSchedule)
}).annotate({ identifier: "PutReminderDefaultsRequest" })
export type PutReminderDefaultsRequest = typeof PutReminderDefaultsRequest.Type

const rules = "A prompt created without `remind` takes this schedule when it is created (later changes do not " +
  "touch prompts already pending); a prompt's own `remind` wins, and `remind: null` on a prompt turns reminders " +
  "off for it. While such a prompt is pending its alert is pushed again to the person's active devices every " +
  "`everySeconds` after creation, at most `times` times, never at or after its expiry, replacing the alert " +
  "shown (same collapse id); an answer, a cancel or the expiry stops them at once. Prompts shown as an " +
  "interactive live activity are not reminded."

export class PersonRemindersGroup extends HttpApiGroup.make("reminders")
  .add(
    HttpApiEndpoint.get("get", "/me/reminders", { success: ReminderDefaults }).pipe(personOperation({
      summary: "My default reminders",
      description: "The person's default reminder schedule: `remind` is `{everySeconds, times}`, or null when they " +
        "set none (the default: no reminders). " + rules
    })),
    HttpApiEndpoint.put("put", "/me/reminders", { payload: PutReminderDefaultsRequest, success: ReminderDefaults }).pipe(
      personOperation({
        summary: "Set my default reminders",
        description: `Replaces the default: \`remind\` is \`{everySeconds, times}\` (everySeconds ` +
          `${REMIND_EVERY_MIN_SECONDS}–${REMIND_EVERY_MAX_SECONDS}, times 1–${REMIND_TIMES_MAX}) or null (no ` +
          "reminders). Out-of-range values answer 400 `VALIDATION_FAILED` with `issues`. Answers the new default. " +
          rules
      })
    )
  )
  .middleware(PersonAuth)
{}
