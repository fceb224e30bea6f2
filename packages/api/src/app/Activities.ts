import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
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

export class PersonActivitiesGroup extends HttpApiGroup.make("activities")
  .add(
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
