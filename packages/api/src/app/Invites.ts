/** Accepting a team invite: the person's own act, in the phone app. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Timestamp } from "../domain/Common.ts"
import { Team, TeamKind, TeamRole } from "../domain/Teams.ts"
import { BadRequest, Conflict, Forbidden, LimitReached, NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { TeamId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** Body of POST /api/app/invites/accept: a join `code`, or a `teamId` to join through its verified domain. */
export const AcceptInviteRequest = Schema.Struct({
  code: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  teamId: Schema.optionalKey(TeamId)
}).annotate({ identifier: "AcceptInviteRequest" })
export type AcceptInviteRequest = typeof AcceptInviteRequest.Type

/** A join code as a path parameter: as loose as the accept body's, so any code reaches the same lookup. */
export const InviteCode = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)).annotate({
  identifier: "InviteCode",
  description: "The join code of an invite link (`/join/<code>`)."
})

/** InvitePreview: what a join code leads to, shown before accepting it. */
export class InvitePreview extends Schema.Class<InvitePreview>("InvitePreview")({
  teamName: Schema.String,
  kind: TeamKind,
  /** The role the person joins in. */
  role: TeamRole,
  /** The name of the person who made the invite. */
  invitedBy: Schema.String,
  expiresAt: Timestamp,
  /** The one address the invite is for (an e-mail invite), else null. */
  email: Schema.NullOr(Schema.String),
  /** The domain whose addresses may accept (a domain invite), else null. */
  domain: Schema.NullOr(Schema.String),
  /** The signed-in person is a member already (accepting would answer 409). */
  alreadyMember: Schema.Boolean
}) {}

export class PersonInvitesGroup extends HttpApiGroup.make("invites")
  .add(
    HttpApiEndpoint.post("accept", "/invites/accept", {
      payload: AcceptInviteRequest,
      success: Team,
      error: [BadRequest, Forbidden, NotFound, Conflict, LimitReached]
    }).pipe(personOperation({
      summary: "Accept a team invite",
      description: "Joins the signed-in person to a team, with exactly one of (else 400 `BAD_REQUEST`):\n\n" +
        "- `code`: a join code from an invite. An unknown, accepted, revoked or expired code answers 404, the same " +
        "for all four; a code joins one person, once. An e-mail invite is for the person whose e-mail it names, " +
        "a domain invite for anyone with an e-mail at that domain (anyone else: 403 `FORBIDDEN`). The person " +
        "joins in the invite's role.\n" +
        "- `teamId`: joins as a member a team whose verified domain is the person's e-mail domain, when the team " +
        "allows it (`autoJoinVerifiedDomain`); any other team answers 404.\n\n" +
        "Already a member: 409 `CONFLICT`. A full family (owner + 3): 422 `LIMIT_REACHED` with `limit: 4`; when " +
        "two people race for its last seat exactly one gets in. Answers the team as the new member sees it."
    })),
    HttpApiEndpoint.get("preview", "/invites/:code", {
      params: { code: InviteCode },
      success: InvitePreview,
      error: NotFound
    }).pipe(personOperation({
      summary: "Preview an invite",
      description: "What a join code leads to, before accepting it (the console's `/join/<code>` page): the team or " +
        "family's name and kind, the role, who invited, when the code expires, whom it is for, and whether the " +
        "person is a member already. An unknown, accepted, revoked or expired code answers 404, the same for all " +
        "four, as accepting it would. Reading changes nothing."
    }))
  )
  .middleware(PersonAuth)
{}
