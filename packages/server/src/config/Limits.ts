/**
 * Bounds on everything a caller controls that the spec's Limits table does not
 * already fix. One place, so the docs and the code agree.
 */

/** Request bodies (decisions.md: 1 MiB for every route but mini-app publish). */
export const MAX_BODY_BYTES = 1024 * 1024

/** Inbound webhook deliveries (`POST /hooks/{token}`): a notification, not a document. */
export const MAX_INBOUND_BYTES = 64 * 1024

/** The body limit of a request path. */
export const bodyLimitFor = (url: string): number => url.startsWith("/hooks/") ? MAX_INBOUND_BYTES : MAX_BODY_BYTES

/** Webhook services per account: `GET /services` lists them all in one answer. */
export const MAX_SERVICES = 1000

/** Reply webhooks per account. */
export const MAX_REPLY_WEBHOOKS = 50

/** Pending prompts `GET /interactions` lists at most (newest first). */
export const MAX_PENDING_LISTED = 200

/** `GET /tokens` page size (both APIs): `limit` default and max, declared in the contract so the client and OpenAPI state it. */
export { TOKENS_LIST_LIMIT } from "@herald/api"
