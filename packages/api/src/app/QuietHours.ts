/**
 * A person's quiet hours (Person API): a weekly schedule in their time zone and
 * "mute for N hours", during which routine pushes are delivered silently or
 * held and summarised when the quiet ends. Pages, prompts marked `urgent` and
 * anything of priority `critical` break through (docs/quiet-hours.md).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Timestamp } from "../domain/Common.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"

/** Windows one schedule may hold (two a day). */
export const QUIET_WINDOWS_MAX = 14
/** The longest mute, in hours (a week). */
export const QUIET_MUTE_HOURS_MAX = 168
/** The longest time-zone name accepted (IANA names are far shorter). */
export const QUIET_TIME_ZONE_MAX = 64

export const Weekday = Schema.Literals(["mon", "tue", "wed", "thu", "fri", "sat", "sun"]).annotate({
  identifier: "Weekday"
})
export type Weekday = typeof Weekday.Type

const StartTime = Schema.String.check(Schema.isPattern(/^([01]\d|2[0-3]):[0-5]\d$/)).annotate({
  description: "Local wall-clock time `HH:MM`, 00:00–23:59."
})
const EndTime = Schema.String.check(Schema.isPattern(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/)).annotate({
  description: "Local wall-clock time `HH:MM`, 00:00–24:00. Not after `start`: the window ends on the next day."
})

export const QuietWindow = Schema.Struct({
  days: Schema.Array(Weekday).check(Schema.isMinLength(1), Schema.isMaxLength(7)),
  start: StartTime,
  end: EndTime
}).annotate({
  identifier: "QuietWindow",
  description: "Quiet from `start` on each of `days` (local time) until `end`: on the same day when `end` is later " +
    "than `start`, else on the next day (`22:00`–`07:00` crosses midnight); `start` equal to `end` (or `00:00`–`24:00`) " +
    "is the whole day."
})
export type QuietWindow = typeof QuietWindow.Type

export const QuietMode = Schema.Literals(["silent", "hold"]).annotate({
  identifier: "QuietMode",
  description: "What routine pushes do during quiet hours: `silent` — delivered with no sound and the passive " +
    "interruption level (Android: a low-priority notification); `hold` — not sent, summarised in one push when the " +
    "quiet ends (the items are in the inbox already)."
})
export type QuietMode = typeof QuietMode.Type

export class QuietHoursState extends Schema.Class<QuietHoursState>("QuietHoursState")({
  /** Whether quiet hours are in effect now. */
  quiet: Schema.Boolean,
  /** Why: a mute, the schedule (a mute wins when both hold); null when not quiet. */
  reason: Schema.NullOr(Schema.Literals(["mute", "schedule"])),
  /** When the quiet ends (a mute and the schedule's windows that follow on from it joined); null when not quiet. */
  until: Schema.NullOr(Timestamp),
  /** Items held for the summary at the end of the quiet (mode `hold`). */
  held: Schema.Natural
}) {}

export class QuietHours extends Schema.Class<QuietHours>("QuietHours")({
  /** Whether the weekly schedule applies (a mute applies either way). */
  enabled: Schema.Boolean,
  /** IANA time zone of the schedule. */
  timeZone: Schema.String,
  windows: Schema.Array(QuietWindow),
  mode: QuietMode,
  /** The end of the current mute; null when not muted. */
  mutedUntil: Schema.NullOr(Timestamp),
  current: QuietHoursState
}) {}

export const PutQuietHoursRequest = Schema.Struct({
  enabled: Schema.optionalKey(Schema.Boolean),
  timeZone: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(QUIET_TIME_ZONE_MAX)),
  windows: Schema.Array(QuietWindow).check(Schema.isMaxLength(QUIET_WINDOWS_MAX)),
  mode: QuietMode
}).annotate({ identifier: "PutQuietHoursRequest" })
export type PutQuietHoursRequest = typeof PutQuietHoursRequest.Type

export const MuteRequest = Schema.Struct({
  hours: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: QUIET_MUTE_HOURS_MAX }))
}).annotate({ identifier: "MuteRequest" })

const breakThrough = "Pages (on-call), prompts created with `urgent: true` and notifications or inbound events of " +
  "priority `critical` break through quiet hours: they are sent as usual. Removal commands and live activities are " +
  "not alerts and are never held or silenced."

export class PersonQuietHoursGroup extends HttpApiGroup.make("quietHours")
  .add(
    HttpApiEndpoint.get("get", "/me/quiet-hours", { success: QuietHours }).pipe(personOperation({
      summary: "My quiet hours",
      description: "The person's quiet-hours settings and whether they are in effect now (`current`: `quiet`, " +
        "`reason`, `until`, how many items are `held`). A person who never set them reads the defaults: disabled, " +
        "time zone `UTC`, no windows, mode `silent`, not muted. " + breakThrough
    })),
    HttpApiEndpoint.put("put", "/me/quiet-hours", { payload: PutQuietHoursRequest, success: QuietHours }).pipe(
      personOperation({
        summary: "Set my quiet hours",
        description: "Replaces the weekly schedule: `timeZone` (an IANA name such as `Europe/Berlin`; bare offsets " +
          `are refused), up to ${QUIET_WINDOWS_MAX} \`windows\` (each \`{days, start, end}\` in local wall-clock ` +
          "time; a window whose `end` is not after its `start` ends on the next day), `mode` (`silent` or `hold`) " +
          "and `enabled` (default true). A schedule that would be quiet all week is refused (use a mute). " +
          "Local times follow the time zone's daylight-saving rules as on-call rotations do: a window starting " +
          "or ending inside a spring-forward gap starts or ends at the first valid instant after it; a time that " +
          "occurs twice (fall back) is its first occurrence. Answers the settings with `current`. Items held " +
          "for a quiet period the change ends are summarised at once. Invalid values answer 400 " +
          "`VALIDATION_FAILED` with `issues` (`timeZone`, `windows`). The mute is unchanged. " + breakThrough
      })
    ),
    HttpApiEndpoint.post("mute", "/me/quiet-hours/mute", { payload: MuteRequest, success: QuietHours }).pipe(
      personOperation({
        summary: "Mute for some hours",
        description: `Quiet from now for \`hours\` (1–${QUIET_MUTE_HOURS_MAX}) whatever the schedule, in the ` +
          "settings' mode; a mute replaces the current one. Answers the settings with `current`. " + breakThrough
      })
    ),
    HttpApiEndpoint.delete("unmute", "/me/quiet-hours/mute", { success: QuietHours }).pipe(personOperation({
      summary: "Unmute",
      description: "Ends the current mute (none: no change). Items held by it are summarised at once unless the " +
        "schedule keeps the person quiet; then at the schedule's end. Answers the settings with `current`."
    }))
  )
  .middleware(PersonAuth)
{}
