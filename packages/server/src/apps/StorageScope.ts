/**
 * An app's `storageScope` for one viewer (decisions.md): an opaque digest of
 * (viewer, app id, origin, the viewer's membership generation in the app's
 * team). The phone keeps each app's browser storage in a partition named by
 * it, so a new origin or leaving and rejoining the team (a new `joined_at`)
 * starts from empty storage. Personal apps use a fixed marker instead of a
 * generation; a team app seen by the person who added it after they left the
 * team uses another, so it never shares a partition with a membership.
 */
import { createHash } from "node:crypto"

export interface ScopeInput {
  readonly viewerId: string
  readonly appId: string
  readonly origin: string
  readonly teamId: string | null
  /** The viewer's `team_members.joined_at` (microseconds) in the app's team, null when not a member. */
  readonly generation: string | null
}

const membershipOf = (input: ScopeInput): string =>
  input.teamId === null ? "personal" : input.generation === null ? `outside:${input.teamId}` : `team:${input.teamId}:${input.generation}`

/** base64url SHA-256 of the four parts, unambiguously joined. */
export const storageScope = (input: ScopeInput): string =>
  createHash("sha256").update(JSON.stringify([input.viewerId, input.appId, input.origin, membershipOf(input)])).digest("base64url")
