/**
 * How long each OAuth secret lives, and the sweep's pace. Constants, not
 * settings: they are what OAuth 2.1 and MCP clients expect, and docs/oauth.md
 * states them.
 */
import type { Duration } from "effect"

/** An authorization code: one use, within 5 minutes. */
export const CODE_TTL_SECONDS = 5 * 60

/** An access token (`hlo_…`): 1 hour. */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60

/** A refresh token (`hlr_…`): 30 days, each use rotating it. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60

/**
 * A client a person approved but that has no grant (never exchanged its code,
 * or its grants were deleted) is deleted after 24 hours. One nobody approved
 * goes sooner: `HERALD_OAUTH_UNAPPROVED_CLIENT_TTL_MINUTES` (config/OAuthConfig.ts).
 */
export const UNCLAIMED_CLIENT_TTL_SECONDS = 24 * 60 * 60

/** The sweep's interval. */
export const SWEEP_EVERY_SECONDS = 10 * 60
export const SWEEP_EVERY: Duration.Input = `${SWEEP_EVERY_SECONDS} seconds`
/**
 * Rows of each kind one statement deletes: a pass repeats it until a batch
 * comes back short, so a backlog is cleared in one pass, in statements that
 * each hold their locks briefly.
 */
export const SWEEP_BATCH = 1000
/** A pass stops after this many batches even so (a million rows), and the next pass goes on. */
export const SWEEP_MAX_BATCHES = 1000
