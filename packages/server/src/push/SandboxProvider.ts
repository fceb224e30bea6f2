/**
 * The sandbox provider, used for every platform whose real provider has no
 * credentials: it accepts every token and records what it would have sent (the
 * APNs payload for iOS, the FCM message for Android) for
 * `GET /api/app/devices/{id}/deliveries`. Two token prefixes exercise the
 * failure paths: `unregistered-…` is answered as permanently unregistered and
 * `unavailable-…` as a transient provider failure. Like APNs and FCM, it
 * refuses for good a payload over 4 KB.
 */
import { Effect } from "effect"
import { makeId } from "../lib/Ids.ts"
import { Accepted, apnsBytes, fcmBytes, PAYLOAD_LIMIT, Rejected, Retry, toFcmMessage } from "./PushMessage.ts"
import type { Provider, PushMessage, PushTarget } from "./PushMessage.ts"
import { SandboxRepo } from "./SandboxRepo.ts"

export const unregisteredPrefix = "unregistered-"
export const unavailablePrefix = "unavailable-"

export const makeSandboxProvider = (platforms: ReadonlyArray<"ios" | "android">): Effect.Effect<Provider, never, SandboxRepo> =>
  Effect.gen(function*() {
    const repo = yield* SandboxRepo

    // No span: the stand-in provider is called for every push, and its record statement has its own.
    const send = Effect.fnUntraced(function*(target: PushTarget, message: PushMessage) {
      if (target.token.startsWith(unregisteredPrefix)) return Rejected("Unregistered", { tokenInvalid: true })
      if (target.token.startsWith(unavailablePrefix)) return Retry("ServiceUnavailable")
      const bytes = target.platform === "ios" ? apnsBytes(message) : fcmBytes(message)
      if (bytes > PAYLOAD_LIMIT) return Rejected("PayloadTooLarge", { tokenInvalid: false })
      const payload = target.platform === "ios" ? message.apns : { ...toFcmMessage(target, message) }
      const id = yield* makeId("sbx")
      return yield* repo.insert({ id, deviceId: target.deviceId, pushType: message.pushType, priority: message.priority, payload }).pipe(
        Effect.as(Accepted(id)),
        // The sandbox's own storage failing is a transient failure of this provider.
        Effect.catch((error) =>
          Effect.logWarning("sandbox push provider could not record a delivery", error).pipe(
            Effect.as(Retry("SandboxStorageError"))
          )
        )
      )
    })

    return { name: "sandbox", description: platforms.join(", "), send } satisfies Provider
  })
