/** Person API handlers of the identity capability. */
import { AppApi, CurrentPerson, DeviceList, ok, SandboxDeliveries, WebPushKey } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { WebPushKeys } from "../push/WebPushKeys.ts"
import { Identity } from "./Identity.ts"

export const MeHandlers = HttpApiBuilder.group(AppApi, "me", Effect.fn(function*(handlers) {
  const identity = yield* Identity
  return handlers.handle("get", () =>
    Effect.flatMap(CurrentPerson, (person) => identity.me(person.userId)).pipe(Effect.orDie))
}))

export const PersonTokensHandlers = HttpApiBuilder.group(AppApi, "tokens", Effect.fn(function*(handlers) {
  const identity = yield* Identity
  return handlers
    .handle("create", ({ payload }) =>
      Effect.flatMap(CurrentPerson, (person) => identity.createToken(person.userId, payload)))
    .handle("list", ({ query }) => Effect.flatMap(CurrentPerson, (person) => identity.listTokens(person.userId, query)))
    .handle("revoke", ({ params }) =>
      Effect.flatMap(CurrentPerson, (person) => identity.revokeToken(person.userId, params.id)).pipe(Effect.as(ok)))
}))

export const PersonDevicesHandlers = HttpApiBuilder.group(AppApi, "devices", Effect.fn(function*(handlers) {
  const identity = yield* Identity
  const webPushKeys = yield* WebPushKeys
  return handlers
    .handle("register", ({ payload }) =>
      Effect.flatMap(CurrentPerson, (person) => identity.registerDevice(person.userId, payload)))
    .handle("list", () =>
      Effect.flatMap(CurrentPerson, (person) => identity.listDevices(person.userId)).pipe(
        Effect.map((items) => new DeviceList({ items }))
      ))
    .handle("rename", ({ params, payload }) =>
      Effect.flatMap(CurrentPerson, (person) => identity.renameDevice(person.userId, params.id, payload.deviceName)))
    .handle("webPushKey", () => Effect.map(webPushKeys.publicKey, (publicKey) => new WebPushKey({ publicKey })))
    .handle("remove", ({ params }) =>
      Effect.flatMap(CurrentPerson, (person) => identity.removeDevice(person.userId, params.id)).pipe(Effect.as(ok)))
    .handle("pushToStartToken", ({ params, payload }) =>
      Effect.flatMap(CurrentPerson, (person) => identity.setPushToStartToken(person.userId, params.id, payload.token)))
    .handle("deliveries", ({ params }) =>
      Effect.flatMap(CurrentPerson, (person) => identity.sandboxDeliveries(person.userId, params.id)).pipe(
        Effect.map((items) => new SandboxDeliveries({ items }))
      ))
}))
