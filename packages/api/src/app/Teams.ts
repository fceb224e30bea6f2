/**
 * The person's teams and families in the console: the same reads and
 * membership acts as the Agent API's, for the signed-in person, with the same
 * role rules (the owner invites admins, admins invite members).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { TeamDetail, TeamInvite, TeamInviteCreated } from "../domain/Teams.ts"
import { BadRequest, Conflict, Forbidden, LimitReached, NotFound } from "../errors.ts"
import { CreateInviteRequest, INVITES_LISTED, TeamInviteList } from "../agent/TeamInvites.ts"
import { TeamList } from "../agent/Teams.ts"
import { personOperation } from "../Operation.ts"
import { InviteId, TeamId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

const notMember = "A team the person is not a member of (or no such team) answers 404."

export class PersonTeamsGroup extends HttpApiGroup.make("teams")
  .add(
    HttpApiEndpoint.get("list", "/teams", { success: TeamList }).pipe(personOperation({
      summary: "My teams and families",
      description: "The teams and families the person belongs to, newest first, each with the person's `role`."
    })),
    HttpApiEndpoint.get("get", "/teams/:id", { params: { id: TeamId }, success: TeamDetail, error: NotFound }).pipe(
      personOperation({
        summary: "A team and its members",
        description: `The Team as the person sees it, with its \`members\` (owner first). ${notMember}`
      })
    ),
    HttpApiEndpoint.post("leave", "/teams/:id/leave", { params: { id: TeamId }, success: Ok, error: [NotFound, Conflict] })
      .pipe(personOperation({
        summary: "Leave a team",
        description: "The person leaves. The owner must transfer ownership first (409 `CONFLICT`). Their services and " +
          `apps shared with the team go back to them; they drop out of its device groups and rotations. ${notMember} ` +
          "Written to the team's audit log (`member.left`)."
      })),
    HttpApiEndpoint.get("invites", "/teams/:id/invites", {
      params: { id: TeamId },
      success: TeamInviteList,
      error: [NotFound, Forbidden]
    }).pipe(personOperation({
      summary: "A team's invites",
      description: `The team's invites, newest first (at most ${INVITES_LISTED}), never their codes. Admin or owner; a ` +
        "member: 403 `FORBIDDEN`; anyone else: 404."
    })),
    HttpApiEndpoint.post("invite", "/teams/:id/invites", {
      params: { id: TeamId },
      payload: CreateInviteRequest,
      success: TeamInviteCreated.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Forbidden, BadRequest, LimitReached]
    }).pipe(personOperation({
      summary: "Invite someone",
      description: "A 7-day join link for one e-mail address (`email`) or anyone at a domain (`domain`), exactly one " +
        "(else 400 `BAD_REQUEST`). The code is returned once, in `code` and in the link `url` (`/join/<code>`, a page " +
        "of the console). Only the owner invites admins; admins invite members; a member: 403 `FORBIDDEN`; anyone " +
        "else: 404. A family holds its owner and 3 more (members plus pending invites; 422 `LIMIT_REACHED`, " +
        "`limit: 4`). Written to the team's audit log (`invite.created`).",
      secret: true
    })),
    HttpApiEndpoint.delete("revokeInvite", "/teams/:id/invites/:inviteId", {
      params: { id: TeamId, inviteId: InviteId },
      success: TeamInvite,
      error: [NotFound, Forbidden, Conflict]
    }).pipe(personOperation({
      summary: "Revoke an invite",
      description: "Its code stops working at once and its family seat is freed; answers the invite with `revokedAt`. " +
        "An accepted invite: 409 `CONFLICT`. Admin or owner (an admin invite: the owner only); a member: 403 " +
        "`FORBIDDEN`; another team's invite, or anyone else: 404."
    }))
  )
  .middleware(PersonAuth)
{}
