/** The person's side of live activities: the cards as the lock screen draws them, and the iOS update token. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { BudgetWarning, LiveActivity, LiveActivityLayout } from "../domain/LiveActivities.ts"
import { NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { ActivityId, DeviceId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** Body of POST /api/app/activities/{id}/update-token. */
export const UpdateTokenRequest = Schema.Struct({
  deviceId: DeviceId,
  token: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4096))
}).annotate({ identifier: "UpdateTokenRequest" })
export type UpdateTokenRequest = typeof UpdateTokenRequest.Type

/**
 * The suggested visible-character budgets of the activity's layout (spec Limits): what the lock-screen card
 * shows of each field before cutting it. `line2` is the subtitle, or the status when there is no subtitle;
 * `compactStatus` is the status in the compact presentation when there is no progress (0: not shown).
 */
export class LiveActivityTextBudgets extends Schema.Class<LiveActivityTextBudgets>("LiveActivityTextBudgets")({
  layout: LiveActivityLayout,
  title: Schema.Natural,
  line2: Schema.Natural,
  detail: Schema.Natural,
  compactStatus: Schema.Natural
}) {}

/** PersonLiveActivity: a live activity of the person, with the budgets its card is drawn with. */
export class PersonLiveActivity extends LiveActivity.extend<PersonLiveActivity>("PersonLiveActivity")({
  budgets: LiveActivityTextBudgets,
  /** The text fields over their budget (kept whole; a phone would cut them). */
  budgetWarnings: Schema.Array(BudgetWarning)
}) {}

export class PersonLiveActivityList extends Schema.Class<PersonLiveActivityList>("PersonLiveActivityList")({
  items: Schema.Array(PersonLiveActivity)
}) {}

/** How many live activities GET /api/app/activities lists. */
export const PERSON_ACTIVITIES_LISTED = 100

export class PersonActivitiesGroup extends HttpApiGroup.make("activities")
  .add(
    HttpApiEndpoint.get("list", "/activities", { success: PersonLiveActivityList }).pipe(personOperation({
      summary: "My live activities",
      description: "The person's live activities from every source: the live ones (`starting`, `active`, `partial`) " +
        `first, then the others, each newest first (at most ${PERSON_ACTIVITIES_LISTED} in all). Each carries its props ` +
        "(`layout`, `title`, `subtitle`, `status`, `detail`, `progress`, …), the visible-character budgets of its " +
        "layout (`budgets`) and the fields over them (`budgetWarnings`), so a card can be drawn as the lock screen " +
        "shows it."
    })),
    HttpApiEndpoint.post("updateToken", "/activities/:id/update-token", {
      params: { id: ActivityId },
      payload: UpdateTokenRequest,
      success: Ok,
      error: NotFound
    }).pipe(personOperation({
      summary: "Register an activity's iOS update token",
      description: "Stores the ActivityKit push token of this live activity on one of the person's devices; the " +
        "device's updates and end queued until now are then sent, in order."
    }))
  )
  .middleware(PersonAuth)
{}
