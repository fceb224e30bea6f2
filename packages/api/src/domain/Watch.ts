/**
 * The dead-man's switch of a webhook service (docs/dead-mans-switch.md): the
 * service expects a delivery at least every `expectEverySeconds`; when none
 * arrives for that long plus `graceSeconds`, its audience is alerted once, and
 * told again when deliveries resume.
 */
import { Schema } from "effect"
import { Timestamp } from "./Common.ts"

/** Bounds (docs/limits.md; the server's config/Limits.ts holds the same numbers). */
export const WATCH_MIN_PERIOD_SECONDS = 60
export const WATCH_MAX_PERIOD_SECONDS = 604_800
export const WATCH_MAX_GRACE_SECONDS = 86_400
export const WATCH_DEFAULT_GRACE_SECONDS = 300

const int = (min: number, max: number) =>
  Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max }))

/** The watch settings a create or update body carries (`watch`); `null` turns the watch off. */
export const ServiceWatchSettings = Schema.Struct({
  /** A delivery is expected at least this often: 60 (a minute) to 604,800 (a week). */
  expectEverySeconds: int(WATCH_MIN_PERIOD_SECONDS, WATCH_MAX_PERIOD_SECONDS),
  /** Extra time before the alert: 0 to 86,400; default 300. */
  graceSeconds: Schema.optionalKey(int(0, WATCH_MAX_GRACE_SECONDS)),
  /** An on-call group (`ocg_…`) paged instead of the service's audience; absent or null: the audience. */
  alertGroupId: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isPattern(/^ocg_[0-9A-Za-z]{1,64}$/))))
}).annotate({ identifier: "ServiceWatchSettings" })
export type ServiceWatchSettings = typeof ServiceWatchSettings.Type

/** A service's watch as its record shows it: the settings and the state. */
export class ServiceWatch extends Schema.Class<ServiceWatch>("ServiceWatch")({
  expectEverySeconds: Schema.Int,
  graceSeconds: Schema.Int,
  /** The on-call group paged on silence; null: the creator and, when shared, the family's members. */
  alertGroupId: Schema.NullOr(Schema.String),
  /** When the settings were last saved: a watch with no delivery yet counts from here. */
  startedAt: Timestamp,
  /** The last delivery seen while watched (null: none yet). */
  lastDeliveryAt: Schema.NullOr(Timestamp),
  /** Set while the service is silent and its audience has been alerted; null while deliveries arrive in time. */
  silentSince: Schema.NullOr(Timestamp),
  /** When the alert is due unless a delivery arrives: the last delivery (or the start) + period + grace. */
  dueAt: Timestamp
}) {}
