/**
 * Which devices a push, a prompt, a live activity or an event goes to: the
 * devices a request names, or else all the account's active ones. A named
 * device that is not the account's (or does not exist) answers 404, the same
 * for both, so an id of another account is never confirmed. One module for
 * every capability, so the rule is written once.
 */
import { NotFound } from "@herald/api"
import { Array as Arr, Context, Effect, Layer } from "effect"
import { batched } from "../db/Batching.ts"
import { IdentityRepo } from "./IdentityRepo.ts"
import type { TargetDevice } from "./IdentityRepo.ts"

export type { TargetDevice } from "./IdentityRepo.ts"

const deviceNotFound = new NotFound({ error: "Device not found." })

export class DeviceTargeting extends Context.Service<DeviceTargeting, {
  /**
   * `deviceIds` (each once, active or not: the caller decides what an inactive
   * or incapable one gets) when every one is the account's, else 404; without
   * `deviceIds`, the account's active devices. Registration order.
   */
  readonly targets: (userId: string, deviceIds?: ReadonlyArray<string> | undefined) => Effect.Effect<ReadonlyArray<TargetDevice>, NotFound>
  /** The active devices of these accounts (e.g. everyone an event goes to), in registration order. */
  readonly activeOf: (userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<TargetDevice>>
  /** The device when it is the account's, else 404 (e.g. the device a person answers from). */
  readonly owned: (userId: string, deviceId: string) => Effect.Effect<TargetDevice, NotFound>
}>()("herald/DeviceTargeting") {
  static readonly layerNoDeps = Layer.effect(DeviceTargeting, Effect.gen(function*() {
    const repo = yield* IdentityRepo

    // Concurrent sends look up their accounts' devices in one statement.
    const activeOfAccount = batched((userIds: Arr.NonEmptyReadonlyArray<string>) =>
      Effect.map(repo.activeDevices([...new Set(userIds)]), (devices) =>
        userIds.map((userId) => devices.filter((d) => d.userId === userId)))
    )

    const named = (userId: string, deviceIds: ReadonlyArray<string>) => {
      const unique = [...new Set(deviceIds)]
      return Effect.flatMap(repo.accountDevices(userId, unique), (devices) =>
        devices.length === unique.length ? Effect.succeed(devices) : Effect.fail(deviceNotFound))
    }

    // No span on this per-request lookup: its statement has one.
    const targets = (userId: string, deviceIds?: ReadonlyArray<string> | undefined) =>
      deviceIds === undefined ? activeOfAccount(userId) : named(userId, deviceIds)

    return DeviceTargeting.of({
      targets,
      activeOf: (userIds) => userIds.length === 0 ? Effect.succeed([]) : repo.activeDevices([...new Set(userIds)]),
      owned: (userId, deviceId) => Effect.map(named(userId, [deviceId]), (devices) => devices[0]!)
    })
  }))

  static readonly layer = DeviceTargeting.layerNoDeps.pipe(Layer.provide(IdentityRepo.layer))
}
