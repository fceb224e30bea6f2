/** Records of teams and families: members, invites, device groups, the verified domain, the audit log. */
import { Schema } from "effect"
import { FreeObject, Timestamp } from "./Common.ts"

/** A member's role in a team or family. */
export const TeamRole = Schema.Literals(["owner", "admin", "member"])
export type TeamRole = typeof TeamRole.Type

/** Team `kind`: a free household `family`, or an existing workplace `team`. */
export const TeamKind = Schema.Literals(["family", "team"])
export type TeamKind = typeof TeamKind.Type

/** Team `plan`. */
export const TeamPlan = Schema.Literals(["free", "team"])
export type TeamPlan = typeof TeamPlan.Type

/** TeamSummary: a team's id (`team_…`) and name, as other records mention it. */
export class TeamSummary extends Schema.Class<TeamSummary>("TeamSummary")({
  id: Schema.String,
  name: Schema.String
}) {}

/** The DNS TXT challenge for a pending email domain, "returned only to the owner while a domain is pending". */
export class DomainVerification extends Schema.Class<DomainVerification>("DomainVerification")({
  host: Schema.String,
  value: Schema.String
}) {}

/** Team `seats`: used and billable seats, and how many remain (null: no limit). */
export class TeamSeats extends Schema.Class<TeamSeats>("TeamSeats")({
  used: Schema.Natural,
  available: Schema.NullOr(Schema.Natural),
  billable: Schema.Natural
}) {}

/** Team: a team or family the caller belongs to, with the caller's `role`; id `team_…`. */
export class Team extends Schema.Class<Team>("Team")({
  kind: Schema.optionalKey(TeamKind),
  id: Schema.String,
  name: Schema.String,
  role: TeamRole,
  memberCount: Schema.Natural,
  appCount: Schema.Natural,
  oncallGroupCount: Schema.Natural,
  deviceGroupCount: Schema.Natural,
  verifiedDomain: Schema.NullOr(Schema.String),
  pendingDomain: Schema.NullOr(Schema.String),
  domainVerification: Schema.NullOr(DomainVerification),
  autoJoinVerifiedDomain: Schema.Boolean,
  retentionDays: Schema.NullOr(Schema.Natural),
  seats: TeamSeats,
  plan: TeamPlan,
  createdAt: Timestamp
}) {}

/** TeamMember: a person in a team and their role. */
export class TeamMember extends Schema.Class<TeamMember>("TeamMember")({
  userId: Schema.String,
  name: Schema.String,
  email: Schema.String,
  image: Schema.NullOr(Schema.String),
  role: TeamRole,
  joinedAt: Timestamp
}) {}

/**
 * TeamInvite: a 7-day join link for one email address or for a whole domain (exactly one of the
 * two is set); id `inv_…`. The spec groups `expiresAt` with the nullable times, so it is nullable
 * here, though Herald always sets it.
 */
export class TeamInvite extends Schema.Class<TeamInvite>("TeamInvite")({
  id: Schema.String,
  teamId: Schema.String,
  email: Schema.NullOr(Schema.String),
  domain: Schema.NullOr(Schema.String),
  role: TeamRole,
  invitedBy: Schema.String,
  expiresAt: Schema.NullOr(Timestamp),
  acceptedAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
}) {}

/** TeamInviteCreated: the invite, its plaintext join `code` (returned once) and the join link. */
export class TeamInviteCreated extends Schema.Class<TeamInviteCreated>("TeamInviteCreated")({
  invite: TeamInvite,
  code: Schema.String,
  /** The join link a person opens; accepting is human-only. */
  url: Schema.String
}) {}

/** A person in a device group. */
export class DeviceGroupMember extends Schema.Class<DeviceGroupMember>("DeviceGroupMember")({
  userId: Schema.String,
  name: Schema.String,
  email: Schema.String,
  // Untyped in the spec; a person's image, nullable as in TeamMember and OncallPerson.
  image: Schema.NullOr(Schema.String)
}) {}

/** A device in a device group, with its owner. */
export class DeviceGroupDevice extends Schema.Class<DeviceGroupDevice>("DeviceGroupDevice")({
  id: Schema.String,
  deviceName: Schema.NullOr(Schema.String),
  userId: Schema.String,
  userName: Schema.String
}) {}

/** DeviceGroup: a named set of members and devices inside a team; id `grp_…`. */
export class DeviceGroup extends Schema.Class<DeviceGroup>("DeviceGroup")({
  id: Schema.String,
  teamId: Schema.String,
  name: Schema.String,
  members: Schema.Array(DeviceGroupMember),
  devices: Schema.Array(DeviceGroupDevice),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

/** AuditLogEntry: one recorded administrative action in a team; id `aud_…`. */
export class AuditLogEntry extends Schema.Class<AuditLogEntry>("AuditLogEntry")({
  id: Schema.String,
  teamId: Schema.String,
  actorUserId: Schema.NullOr(Schema.String),
  actorName: Schema.NullOr(Schema.String),
  actorTokenId: Schema.NullOr(Schema.String),
  action: Schema.String,
  targetType: Schema.NullOr(Schema.String),
  targetId: Schema.NullOr(Schema.String),
  metadata: Schema.NullOr(FreeObject),
  ip: Schema.NullOr(Schema.String),
  userAgent: Schema.NullOr(Schema.String),
  createdAt: Timestamp
}) {}

/** AuditLogPage: a page of audit entries and the cursor of the next (null at the end). */
export class AuditLogPage extends Schema.Class<AuditLogPage>("AuditLogPage")({
  entries: Schema.Array(AuditLogEntry),
  nextCursor: Schema.NullOr(Schema.String)
}) {}

/** TeamDetail: a team as the caller sees it, with its members (GET /teams/{id}: "a team and its members"). */
export class TeamDetail extends Schema.Class<TeamDetail>("TeamDetail")({
  ...Team.fields,
  members: Schema.Array(TeamMember)
}) {}
