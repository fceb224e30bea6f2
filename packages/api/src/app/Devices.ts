import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { Device, LiveActivityTokenEnvironment, Platform, SandboxDeliveries } from "../domain/Identity.ts"
import { NotFound } from "../errors.ts"
import { DeviceList } from "../agent/Devices.ts"
import { personOperation } from "../Operation.ts"
import { DeviceId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** A provider's device token: printable, no whitespace (APNs hex, FCM registration tokens). */
const PushToken = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4096), Schema.isPattern(/^\S+$/))

/** Body of POST /api/app/devices. */
export const RegisterDeviceRequest = Schema.Struct({
  platform: Platform,
  deviceName: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(100)))),
  pushToken: PushToken,
  liveActivitiesCapable: Schema.optionalKey(Schema.Boolean),
  interactiveLiveActivitiesCapable: Schema.optionalKey(Schema.Boolean),
  liveActivityTokenEnvironment: Schema.optionalKey(Schema.NullOr(LiveActivityTokenEnvironment))
}).annotate({ identifier: "RegisterDeviceRequest" })
export type RegisterDeviceRequest = typeof RegisterDeviceRequest.Type

/** Body of PUT /api/app/devices/{id}/push-to-start-token. */
export const PushToStartTokenRequest = Schema.Struct({
  token: PushToken
}).annotate({ identifier: "PushToStartTokenRequest" })
export type PushToStartTokenRequest = typeof PushToStartTokenRequest.Type

export class PersonDevicesGroup extends HttpApiGroup.make("devices")
  .add(
    HttpApiEndpoint.post("register", "/devices", {
      payload: RegisterDeviceRequest,
      success: Device.pipe(HttpApiSchema.status(201))
    }).pipe(personOperation({
      summary: "Register this phone",
      description: "Registers the phone app's push token: a push token names one app install. Registering the same " +
        "`pushToken` again (same platform) updates that device and reactivates it. When another person registered it " +
        "before (the phone changed hands), their device is retired (inactive, its history kept with them) and the " +
        "caller gets a new device: never the other person's device id or deliveries."
    })),
    HttpApiEndpoint.get("list", "/devices", { success: DeviceList }).pipe(personOperation({
      summary: "List my devices",
      description: "The person's devices, newest first."
    })),
    HttpApiEndpoint.delete("remove", "/devices/:id", { params: { id: DeviceId }, success: Ok, error: NotFound }).pipe(
      personOperation({ summary: "Remove a device", description: "Removes one of the person's devices." })
    ),
    HttpApiEndpoint.put("pushToStartToken", "/devices/:id/push-to-start-token", {
      params: { id: DeviceId },
      payload: PushToStartTokenRequest,
      success: Device,
      error: NotFound
    }).pipe(personOperation({
      summary: "Set the live-activity push-to-start token",
      description: "Stores the iOS live-activity push-to-start token of the device and stamps " +
        "`liveActivityTokenUpdatedAt`."
    })),
    HttpApiEndpoint.get("deliveries", "/devices/:id/deliveries", {
      params: { id: DeviceId },
      success: SandboxDeliveries,
      error: NotFound
    }).pipe(personOperation({
      summary: "What the sandbox provider sent this device",
      description: "Sandbox provider only: the pushes the device was sent (the latest 500), oldest first, as " +
        "`{id, pushType, priority, payload, createdAt}`. With a real provider configured the list holds only what " +
        "the sandbox recorded (nothing)."
    }))
  )
  .middleware(PersonAuth)
{}
