/**
 * The Person API's devices: the phones (APNs, FCM) and browsers (Web Push) a
 * person's pushes go to, registered, renamed and removed by the person, and
 * the key a browser subscribes with.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { Device, LiveActivityTokenEnvironment, SandboxDeliveries } from "../domain/Identity.ts"
import { NotFound } from "../errors.ts"
import { DeviceList } from "../agent/Devices.ts"
import { personOperation } from "../Operation.ts"
import { DeviceId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** A provider's device token: printable, no whitespace (APNs hex, FCM registration tokens). */
const PushToken = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4096), Schema.isPattern(/^\S+$/))

const DeviceName = Schema.NullOr(Schema.String.check(Schema.isMaxLength(100)))

/** The fields of a phone's registration, the same for both platforms. */
const phoneFields = {
  deviceName: Schema.optionalKey(DeviceName),
  pushToken: PushToken,
  liveActivitiesCapable: Schema.optionalKey(Schema.Boolean),
  interactiveLiveActivitiesCapable: Schema.optionalKey(Schema.Boolean),
  liveActivityTokenEnvironment: Schema.optionalKey(Schema.NullOr(LiveActivityTokenEnvironment))
}

/** Longest push service endpoint taken (the outbound URL bound). */
export const WEB_PUSH_ENDPOINT_MAX = 2048

/**
 * A browser's `PushSubscription.toJSON()`: where its push service takes messages for it, and the keys
 * its payloads are encrypted to (RFC 8291). `p256dh` is the browser's P-256 public key, uncompressed
 * (65 bytes, so 87 base64url characters starting with `B`); `auth` its 16-byte secret (22 characters).
 */
export const WebPushSubscription = Schema.Struct({
  endpoint: Schema.String.check(
    Schema.isMaxLength(WEB_PUSH_ENDPOINT_MAX),
    Schema.isPattern(/^https?:\/\/[^\s/?#]+\S*$/, { expected: "an https:// URL (the push service endpoint)" })
  ),
  expirationTime: Schema.optionalKey(Schema.NullOr(Schema.Finite)),
  keys: Schema.Struct({
    p256dh: Schema.String.check(Schema.isPattern(/^B[A-Za-z0-9_-]{86}=?$/, {
      expected: "an uncompressed P-256 public key: 65 bytes in base64url"
    })),
    auth: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{22}(==)?$/, { expected: "16 bytes in base64url" }))
  })
}).annotate({ identifier: "WebPushSubscription" })
export type WebPushSubscription = typeof WebPushSubscription.Type

/**
 * Body of POST /api/app/devices: a phone (`ios`, `android`) with its provider's `pushToken`, or a
 * browser (`web`) with its Web Push `subscription`. The platform picks the shape, so a wrong or
 * missing field is reported against that shape alone.
 */
export const RegisterDeviceRequest = Schema.Union([
  Schema.Struct({ platform: Schema.Literal("ios"), ...phoneFields }),
  Schema.Struct({ platform: Schema.Literal("android"), ...phoneFields }),
  Schema.Struct({
    platform: Schema.Literal("web"),
    deviceName: Schema.optionalKey(DeviceName),
    subscription: WebPushSubscription,
    /** Live activity updates shown as a notification that each update replaces. */
    liveActivitiesCapable: Schema.optionalKey(Schema.Boolean)
  })
]).annotate({
  identifier: "RegisterDeviceRequest",
  // The answer when no shape's platform matches (a mismatch inside a shape names its own field).
  message: "Expected platform \"ios\" or \"android\" with a pushToken, or \"web\" with a subscription"
})
export type RegisterDeviceRequest = typeof RegisterDeviceRequest.Type

/** Body of PATCH /api/app/devices/{id}. */
export const RenameDeviceRequest = Schema.Struct({
  deviceName: DeviceName
}).annotate({ identifier: "RenameDeviceRequest" })
export type RenameDeviceRequest = typeof RenameDeviceRequest.Type

/** The service's VAPID public key (RFC 8292), for `PushManager.subscribe({applicationServerKey})`. */
export class WebPushKey extends Schema.Class<WebPushKey>("WebPushKey")({
  /** The uncompressed P-256 point (65 bytes), base64url. */
  publicKey: Schema.String
}) {}

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
      summary: "Register this phone or browser",
      description: "Registers the phone app's push token (`ios`, `android`) or a browser's Web Push subscription " +
        "(`web`: `subscription` is `PushSubscription.toJSON()`, subscribed with the key of `GET /push/web-key`). A " +
        "push token or a subscription endpoint names one app install or browser profile. Registering the same " +
        "`pushToken` or `endpoint` again (same platform) updates that device and reactivates it. When another person " +
        "registered it before (the phone changed hands), their device is retired (inactive, its history kept with " +
        "them) and the caller gets a new device: never the other person's device id or deliveries. A `web` endpoint " +
        "must be an https URL (plain http only to loopback, and only where the operator allows private-network " +
        "targets); every push to it follows the outbound address rules."
    })),
    HttpApiEndpoint.get("list", "/devices", { success: DeviceList }).pipe(personOperation({
      summary: "List my devices",
      description: "The person's devices, newest first."
    })),
    HttpApiEndpoint.patch("rename", "/devices/:id", {
      params: { id: DeviceId },
      payload: RenameDeviceRequest,
      success: Device,
      error: NotFound
    }).pipe(personOperation({
      summary: "Rename a device",
      description: "Sets the name the person sees for one of their devices (any platform); `null` clears it."
    })),
    HttpApiEndpoint.get("webPushKey", "/push/web-key", { success: WebPushKey }).pipe(personOperation({
      summary: "The Web Push application server key",
      description: "The service's current VAPID public key (RFC 8292), base64url of the uncompressed P-256 point: " +
        "the `applicationServerKey` a browser subscribes with before registering a `web` device. The service makes " +
        "it on first use; after the operator rotates it (`herald admin webpush rotate`) browsers must subscribe " +
        "again with the new key."
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
