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

/** A registered client nobody approved is deleted after 24 hours. */
export const UNCLAIMED_CLIENT_TTL_SECONDS = 24 * 60 * 60

/** The sweep's interval, and how many rows of each kind one pass deletes at most. */
export const SWEEP_EVERY: Duration.Input = "10 minutes"
export const SWEEP_BATCH = 1000
