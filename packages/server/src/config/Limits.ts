/**
 * Bounds on everything a caller controls that the spec's Limits table does not
 * already fix. One place, so the docs and the code agree.
 */
import { MINI_APP_MAX_ARCHIVE_BYTES } from "@herald/api"

/**
 * A prompt's reminders and a person's default (`remind`): every 60–86,400 s, 1–10 times, never at or after the
 * prompt's expiry. Bounds of the contract (docs/limits.md).
 */
export { REMIND_EVERY_MAX_SECONDS, REMIND_EVERY_MIN_SECONDS, REMIND_TIMES_MAX } from "@herald/api"

/** Request bodies (decisions.md: 1 MiB for every route but mini-app publish). */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * Mini-apps (decisions.md, spec Limits): a published archive (the publish body) is at most 12 MiB, its decoded
 * files 8 MiB together; a person keeps at most 200 packages (422 `LIMIT_REACHED`). Bounds of the contract.
 */
export { MINI_APP_MAX_ARCHIVE_BYTES, MINI_APP_MAX_FILES_BYTES, MINI_APP_MAX_PACKAGES } from "@herald/api"

/**
 * Inbound webhook deliveries (`POST /hooks/{token}`): what real senders send (a GitHub push with many commits,
 * a Grafana group of alerts) fits in 1 MiB. The Event keeps a title of 200 and a body of 10,000 characters (the
 * spec's bounds: the spec's JSON, text and form bodies over them are refused, a sender's are cut), an alert key
 * of 200 (a longer one is replaced by its SHA-256), and the parsed payload within 16 KiB (pruned beyond:
 * docs/inbound-webhooks.md).
 */
export const MAX_INBOUND_BYTES = 1024 * 1024
export const INBOUND_MAX_TITLE = 200
export const INBOUND_MAX_BODY = 10_000
export const INBOUND_MAX_ALERT_KEY = 200
export const INBOUND_MAX_PAYLOAD_BYTES = 16 * 1024

/**
 * Quiet hours (Person API `/api/app/me/quiet-hours`, quiet/): at most 14 windows (two a day), a time-zone name of
 * 64 characters, a mute of 1–168 hours; a summary lists 3 titles. Bounds of the contract.
 */
export { QUIET_MUTE_HOURS_MAX, QUIET_TIME_ZONE_MAX, QUIET_WINDOWS_MAX } from "@herald/api"

/**
 * The e-mail channel (Person API `/api/app/me/email-channel`, email/): a prompt is mailed 60–604800 seconds after
 * creation and before its expiry; one verification mail per 10 minutes; a reply typed on the answer page 1–4000
 * characters (as the Person API's answer). Bounds of the contract.
 */
export { EMAIL_FALLBACK_MAX_SECONDS, EMAIL_FALLBACK_MIN_SECONDS, EMAIL_VERIFICATION_EVERY_MINUTES } from "@herald/api"

/**
 * The OAuth routes anyone may call (oauth/): a registration, a consent form, a
 * token or revocation request is a few hundred bytes; 16 KiB leaves room for
 * ten 2,000-character redirect URIs and keeps unauthenticated bodies small.
 */
export const MAX_OAUTH_BYTES = 16 * 1024

// Limits by the matched route's pattern (http/Routes.ts), never by a prefix of
// the URL: a path the router reaches by another spelling gets the same limit.
const bodyLimitByRoute: ReadonlyMap<string, number> = new Map([
  ["/hooks/:token", MAX_INBOUND_BYTES],
  ["/api/agent/mini-apps/publish", MINI_APP_MAX_ARCHIVE_BYTES],
  ["/oauth/register", MAX_OAUTH_BYTES],
  ["/oauth/authorize", MAX_OAUTH_BYTES],
  ["/oauth/token", MAX_OAUTH_BYTES],
  ["/oauth/revoke", MAX_OAUTH_BYTES]
])

/** The body limit of a request by its matched route (undefined: no route), `MAX_BODY_BYTES` unless listed above. */
export const bodyLimitFor = (route: string | undefined): number =>
  (route === undefined ? undefined : bodyLimitByRoute.get(route)) ?? MAX_BODY_BYTES

/**
 * JSON bodies nest at most this deep (`[`/`{` levels), checked on the raw text
 * before it is parsed: `JSON.parse` and the route decoders cost far more per
 * level than per byte (500,000 levels in 1 MiB took over a second). The
 * deepest route schema (live-activity props, 8 levels inside `props`) stays
 * well inside it.
 */
export const MAX_JSON_DEPTH = 64

/** Webhook services per account: `GET /services` lists them all in one answer. */
export const MAX_SERVICES = 1000

/** Web apps a person adds (`POST /apps`); `GET /apps` lists them all in one answer. */
export const MAX_APPS = 200

/** Reply webhooks per account. */
export const MAX_REPLY_WEBHOOKS = 50

/** decisions.md: a family is its owner plus 3; accepted members and pending, unexpired invites count. */
export const FAMILY_SEATS = 4

/** Pending invites a workplace team keeps at once (a family's are bounded by its seats). */
export const MAX_PENDING_INVITES = 500

/** Members of a workplace team (a family holds `FAMILY_SEATS`). */
export const MAX_TEAM_MEMBERS = 5000

/** Families one person may belong to (as owner or member) when creating one: `GET /teams` lists them all. */
export const MAX_FAMILIES_PER_PERSON = 20

/** Pending prompts `GET /interactions` lists at most (newest first). */
export const MAX_PENDING_LISTED = 200

/** `GET /tokens` page size (both APIs): `limit` default and max, declared in the contract so the client and OpenAPI state it. */
export { TOKENS_LIST_LIMIT } from "@herald/api"

/** Device groups per team or family (422 `LIMIT_REACHED` beyond it). */
export const MAX_DEVICE_GROUPS = 100

/** `GET /teams/{id}/devices` lists at most this many devices (newest first). */
export const MAX_TEAM_DEVICES_LISTED = 10_000

/** Members and devices one device group lists at most: schema bounds of the contract (400 `VALIDATION_FAILED`). */
export { DEVICE_GROUP_MAX_DEVICES, DEVICE_GROUP_MAX_MEMBERS } from "@herald/api"

/**
 * On-call: groups per team or family and current-and-future overrides per group (422 `LIMIT_REACHED`);
 * rotation members, escalation steps and their minutes, and an override's longest window in days
 * (400 `VALIDATION_FAILED`): bounds of the contract.
 */
export {
  ONCALL_MAX_ESCALATION_MINUTES,
  ONCALL_MAX_ESCALATION_STEPS,
  ONCALL_MAX_GROUPS,
  ONCALL_MAX_OVERRIDE_DAYS,
  ONCALL_MAX_OVERRIDES,
  ONCALL_MAX_ROTATION_MEMBERS
} from "@herald/api"

/**
 * Tunnel connectors: connectors per person (422 `LIMIT_REACHED`); routes per connector, the longest
 * `pathPrefix`, `upstream` and name (400 `VALIDATION_FAILED`): bounds of the contract.
 */
export {
  CONNECTOR_MAX_NAME,
  CONNECTOR_MAX_PATH_PREFIX,
  CONNECTOR_MAX_ROUTES,
  CONNECTOR_MAX_UPSTREAM,
  CONNECTORS_MAX_PER_PERSON
} from "@herald/api"

/**
 * The dead-man's switch of a webhook service (`watch`): the expected period and the grace, in seconds
 * (400 `VALIDATION_FAILED` outside them), and the grace when none is given: bounds of the contract.
 */
export {
  WATCH_DEFAULT_GRACE_SECONDS,
  WATCH_MAX_GRACE_SECONDS,
  WATCH_MAX_PERIOD_SECONDS,
  WATCH_MIN_PERIOD_SECONDS
} from "@herald/api"
