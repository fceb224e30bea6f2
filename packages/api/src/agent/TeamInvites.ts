/** Team invites: 7-day join codes for one e-mail address or a whole domain; accepting is the person's (Person API). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { TeamInvite, TeamInviteCreated } from "../domain/Teams.ts"
import { BadRequest, Conflict, Forbidden, LimitReached, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { InviteId, TeamId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

/** An e-mail address, as loose as addresses are, bounded as RFC 5321 bounds them. */
export const InviteEmail = Schema.String.check(
  Schema.isMaxLength(254),
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/)
).annotate({ identifier: "InviteEmail", description: "An e-mail address." })

/** A domain name: dot-separated labels of letters, digits and hyphens. */
export const InviteDomain = Schema.String.check(
  Schema.isMaxLength(253),
  Schema.isPattern(/^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/)
).annotate({ identifier: "InviteDomain", description: "A domain name such as `example.org`." })

/** Body of POST /teams/{id}/invites: exactly one of `email` or `domain`. */
export const CreateInviteRequest = Schema.Struct({
  email: Schema.optionalKey(InviteEmail),
  domain: Schema.optionalKey(InviteDomain),
  role: Schema.optionalKey(Schema.Literals(["admin", "member"]))
}).annotate({ identifier: "CreateInviteRequest" })
export type CreateInviteRequest = typeof CreateInviteRequest.Type

export class TeamInviteList extends Schema.Class<TeamInviteList>("TeamInviteList")({
  items: Schema.Array(TeamInvite)
}) {}

/** How many invites GET /teams/{id}/invites lists (newest first). */
export const INVITES_LISTED = 500

export class TeamInvitesGroup extends HttpApiGroup.make("teamInvites")
  .add(
    HttpApiEndpoint.get("list", "/teams/:id/invites", {
      params: { id: TeamId },
      success: TeamInviteList,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "List a team's invites",
      description: `The team's invites, newest first (at most ${INVITES_LISTED}): pending, accepted, revoked and ` +
        "expired alike, never their codes. Admin or owner; a member: 403 `FORBIDDEN`; anyone else: 404.",
      scopes: ["teams:read"]
    })),
    HttpApiEndpoint.post("create", "/teams/:id/invites", {
      params: { id: TeamId },
      payload: CreateInviteRequest,
      success: TeamInviteCreated.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Forbidden, BadRequest, LimitReached]
    }).pipe(agentOperation({
      summary: "Invite someone to a team",
      description: "Creates a 7-day join link for one e-mail address (`email`) or for anyone at a domain " +
        "(`domain`) — exactly one of the two, else 400 `BAD_REQUEST`. The code (128 random bits) is returned " +
        "once, in `code` and in the join link `url`; Herald keeps only its hash. Accepting is the person's, in " +
        "the phone app (Person API `POST /api/app/invites/accept`); each code joins one person, once. Only the " +
        "owner invites admins (`role: \"admin\"`); admins invite members; a member: 403 `FORBIDDEN`; anyone " +
        "else: 404. A family holds its owner and 3 more: accepted members plus pending, unexpired invites may " +
        "not pass 4 (422 `LIMIT_REACHED`, `limit: 4`). A workplace team keeps at most 500 pending invites and " +
        "5,000 members (422 `LIMIT_REACHED` with `limit`).",
      scopes: ["teams:write"],
      secret: true
    })),
    HttpApiEndpoint.delete("revoke", "/teams/:id/invites/:inviteId", {
      params: { id: TeamId, inviteId: InviteId },
      success: TeamInvite,
      error: [NotFound, Forbidden, Conflict]
    }).pipe(agentOperation({
      summary: "Revoke an invite",
      description: "Revokes a pending invite: its code stops working at once and its family seat is freed. " +
        "Answers the invite with `revokedAt` (revoking twice answers it again). An accepted invite: 409 " +
        "`CONFLICT` (remove the member instead). Admin or owner (an admin invite: the owner only); a member: " +
        "403 `FORBIDDEN`; an invite of another team, or anyone else: 404.",
      scopes: ["teams:write"]
    }))
  )
  .middleware(AgentAuth)
{}
