/**
 * Teams and families (teams/): teams, invites, device groups, the domain, the
 * audit log and its retention, over their SQL. Membership and the audit trail
 * every capability writes are the platform's.
 */
import { Layer } from "effect"
import { AuditLog } from "./AuditLog.ts"
import { AuditLogRepo } from "./AuditLogRepo.ts"
import { AuditRetention } from "./AuditRetention.ts"
import { DeviceGroups } from "./DeviceGroups.ts"
import { DeviceGroupsRepo } from "./DeviceGroupsRepo.ts"
import { DnsTxt } from "./DnsTxt.ts"
import { Domains } from "./Domains.ts"
import { DomainsRepo } from "./DomainsRepo.ts"
import { Invites } from "./Invites.ts"
import { InvitesRepo } from "./InvitesRepo.ts"
import { Teams } from "./Teams.ts"
import { TeamsRepo } from "./TeamsRepo.ts"

export const TeamsLayer = Layer.mergeAll(
  Invites.layerNoDeps,
  DeviceGroups.layerNoDeps,
  Domains.layerNoDeps,
  AuditLog.layerNoDeps,
  AuditRetention.layerNoDeps
).pipe(
  Layer.provideMerge(Teams.layerNoDeps),
  Layer.provide(Layer.mergeAll(TeamsRepo.layer, InvitesRepo.layer, DeviceGroupsRepo.layer, DomainsRepo.layer, AuditLogRepo.layer, DnsTxt.layer))
)
