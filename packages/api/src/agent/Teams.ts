/**
 * Teams and families and their membership (spec "Teams and families"; bodies,
 * scopes and role rules from decisions.md).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { Team, TeamDetail, TeamKind, TeamRole } from "../domain/Teams.ts"
import { Conflict, Forbidden, LimitReached, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { TeamId, UserId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

const TeamName = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))

/** decisions.md: `retentionDays` is 1–3650, or null to keep the audit log. */
export const RetentionDays = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3650 }))

/**
 * Body of POST /teams. `kind` is optional in the schema so that a missing one answers the spec's 403,
 * not a 400: only `family` is accepted.
 */
export const CreateTeamRequest = Schema.Struct({
  kind: Schema.optionalKey(TeamKind),
  name: TeamName
}).annotate({ identifier: "CreateTeamRequest" })
export type CreateTeamRequest = typeof CreateTeamRequest.Type

/** Body of PATCH /teams/{id}: the fields to change. */
export const UpdateTeamRequest = Schema.Struct({
  name: Schema.optionalKey(TeamName),
  autoJoinVerifiedDomain: Schema.optionalKey(Schema.Boolean),
  retentionDays: Schema.optionalKey(Schema.NullOr(RetentionDays))
}).annotate({ identifier: "UpdateTeamRequest" })
export type UpdateTeamRequest = typeof UpdateTeamRequest.Type

/** Body of PATCH /teams/{id}/members/{userId}. */
export const UpdateMemberRequest = Schema.Struct({
  role: TeamRole
}).annotate({ identifier: "UpdateMemberRequest" })
export type UpdateMemberRequest = typeof UpdateMemberRequest.Type

export class TeamList extends Schema.Class<TeamList>("TeamList")({
  items: Schema.Array(Team)
}) {}

const notMember = "A team the caller is not a member of (or no such team) answers 404."

export class TeamsGroup extends HttpApiGroup.make("teams")
  .add(
    HttpApiEndpoint.get("list", "/teams", { success: TeamList }).pipe(agentOperation({
      summary: "List teams and families",
      description: "The teams and families the caller belongs to, newest first, each with the caller's `role`.",
      scopes: ["teams:read"]
    })),
    HttpApiEndpoint.post("create", "/teams", {
      payload: CreateTeamRequest,
      success: Team.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, LimitReached]
    }).pipe(agentOperation({
      summary: "Create a family",
      description: "Creates a family (plan `free`) with the caller as its owner. `kind` must be `family`: `team` or " +
        "omitted answers 403 `FORBIDDEN` (new teams are created by the operator, `herald admin team create`). A family " +
        "is its owner plus 3 more. A person belongs to at most 20 families (422 `LIMIT_REACHED` with `limit`). " +
        "Written to the family's audit log (`team.created`).",
      scopes: ["teams:write"]
    })),
    HttpApiEndpoint.get("get", "/teams/:id", { params: { id: TeamId }, success: TeamDetail, error: NotFound })
      .pipe(agentOperation({
        summary: "Get a team and its members",
        description: `The Team as the caller sees it, with its \`members\` (owner first). ${notMember} The DNS ` +
          "challenge (`domainVerification`) is shown to the owner only, while a domain is pending.",
        scopes: ["teams:read"]
      })),
    HttpApiEndpoint.patch("update", "/teams/:id", {
      params: { id: TeamId },
      payload: UpdateTeamRequest,
      success: Team,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Update a team",
      description: "Renaming needs an admin or the owner; `autoJoinVerifiedDomain` and `retentionDays` (1–3650, or " +
        "null to keep the audit log) need the owner; a body with both needs the owner. A member lacking the role: " +
        `403 \`FORBIDDEN\`. ${notMember} Written to the audit log (\`team.renamed\` for a rename alone, else ` +
        "`team.updated`).",
      scopes: ["teams:write"]
    })),
    HttpApiEndpoint.delete("remove", "/teams/:id", { params: { id: TeamId }, success: Ok, error: [NotFound, Forbidden] })
      .pipe(agentOperation({
        summary: "Delete a team",
        description: "The owner only (others: 403 `FORBIDDEN`). Its apps go back to the members who added them and " +
          "its shared services back to their creators; its invites, device groups and audit log are deleted with it. " +
          notMember,
        scopes: ["teams:write"]
      })),
    HttpApiEndpoint.post("leave", "/teams/:id/leave", { params: { id: TeamId }, success: Ok, error: [NotFound, Conflict] })
      .pipe(agentOperation({
        summary: "Leave a team",
        description: "The caller leaves. The owner must transfer ownership first (409 `CONFLICT`). The caller's " +
          "services shared with the team are unshared, the apps they shared to it go back to them, and they drop out " +
          `of its device groups. ${notMember} Written to the audit log (\`member.left\`, and \`service.unshared\` / ` +
          "`app.unshared` for each).",
        scopes: ["teams:write"]
      })),
    HttpApiEndpoint.patch("updateMember", "/teams/:id/members/:userId", {
      params: { id: TeamId, userId: UserId },
      payload: UpdateMemberRequest,
      success: TeamDetail,
      error: [NotFound, Forbidden, Conflict]
    }).pipe(agentOperation({
      summary: "Change a member's role",
      description: "The owner only (others: 403 `FORBIDDEN`). `owner` transfers ownership: the named member becomes " +
        "the owner and the previous owner an admin. The owner cannot change their own role otherwise (409 " +
        "`CONFLICT`: transfer instead). A person who is not a member: 404. Answers the team with its members. " +
        "Written to the audit log (`member.role_changed` or `team.ownership_transferred`).",
      scopes: ["teams:write"]
    })),
    HttpApiEndpoint.delete("removeMember", "/teams/:id/members/:userId", {
      params: { id: TeamId, userId: UserId },
      success: Ok,
      error: [NotFound, Forbidden, Conflict]
    }).pipe(agentOperation({
      summary: "Remove a member",
      description: "An admin or the owner removes a member; only the owner removes an admin; the owner cannot be " +
        "removed (403 `FORBIDDEN`). To remove yourself, leave (409 `CONFLICT`). A person who is not a member: 404. " +
        "As on leaving, their shared services and apps go back to them and they drop out of the team's device " +
        "groups. Written to the audit log (`member.removed`).",
      scopes: ["teams:write"]
    }))
  )
  .middleware(AgentAuth)
{}
