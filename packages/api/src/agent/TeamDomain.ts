/**
 * A team's email domain: the pending domain with its DNS TXT challenge, and
 * its verification (spec "Teams and families"; decisions.md "Domain" and
 * "Domain verification TXT record").
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Team } from "../domain/Teams.ts"
import { Conflict, DnsLookupFailed, DomainNotVerified, Forbidden, NotFound, PublicEmailDomain, RateLimited } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { TeamId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

/** Verify calls a team may make a minute (decisions.md). */
export const DOMAIN_VERIFY_PER_MINUTE = 10

/**
 * A hostname with at least one dot: labels of letters, digits and inner hyphens (1–63 characters), at most
 * 253 in all, the last label starting with a letter (so an IP address is not a domain). Any case: the
 * server stores it lowercased.
 */
export const EmailDomain = Schema.String.check(
  Schema.isMaxLength(253),
  Schema.isPattern(/^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, {
    message: "a domain name with at least one dot, such as example.org"
  })
).annotate({ description: "An email domain such as `example.org` (any case; stored lowercased)." })

/** Body of POST /teams/{id}/domain. */
export const SetTeamDomainRequest = Schema.Struct({
  domain: EmailDomain
}).annotate({ identifier: "SetTeamDomainRequest" })
export type SetTeamDomainRequest = typeof SetTeamDomainRequest.Type

const notMember = "A team the caller is not a member of (or no such team) answers 404; an admin or member 403 `FORBIDDEN`."

export class TeamDomainGroup extends HttpApiGroup.make("teamDomain")
  .add(
    HttpApiEndpoint.post("set", "/teams/:id/domain", {
      params: { id: TeamId },
      payload: SetTeamDomainRequest,
      success: Team,
      error: [NotFound, Forbidden, PublicEmailDomain]
    }).pipe(agentOperation({
      summary: "Set the team's email domain",
      description: "The owner only. Stores `domain` (lowercased) as the team's pending domain with a fresh " +
        "challenge, replacing any earlier pending one; a verified domain stays until the new one is verified. " +
        "Publish a DNS TXT record at `_herald-verification.<domain>` with the value `herald-verify=<token>` (the " +
        "answer's `domainVerification` gives both), then call the verify operation. A pending domain is not " +
        "unique: several teams may claim one, the first to verify it keeps it. A name that is not a domain: 400 " +
        "`VALIDATION_FAILED`; a public mailbox domain (gmail.com, outlook.com, …): 400 `PUBLIC_EMAIL_DOMAIN`. " +
        `${notMember} Written to the audit log (\`domain.set\`).`,
      scopes: ["teams:write"]
    })),
    HttpApiEndpoint.delete("clear", "/teams/:id/domain", {
      params: { id: TeamId },
      success: Team,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Clear the team's email domain",
      description: "The owner only. Clears the pending domain and its challenge and the verified domain (domain " +
        "invites already sent stay valid until they expire; auto-join stops). Clearing nothing changes nothing. " +
        `${notMember} Written to the audit log (\`domain.cleared\`).`,
      scopes: ["teams:write"]
    })),
    HttpApiEndpoint.post("verify", "/teams/:id/domain/verify", {
      params: { id: TeamId },
      success: Team,
      error: [NotFound, Forbidden, Conflict, DomainNotVerified, DnsLookupFailed, RateLimited]
    }).pipe(agentOperation({
      summary: "Verify the team's email domain",
      description: "The owner only. Looks up the TXT records of `_herald-verification.<pending domain>` (5 s " +
        "timeout); when one is `herald-verify=<token>` the domain becomes the team's verified domain and the " +
        "pending one is cleared. No such record, a different value or no such name: 422 `DOMAIN_NOT_VERIFIED` " +
        "(not remembered: publish the record and verify again at once). The resolver failing (timeout, SERVFAIL, " +
        "refused): 502 `DNS_LOOKUP_FAILED`, remembered for the domain for at most one minute, during which " +
        "verify answers the same without a new lookup (`Retry-After` says when it will look again). Nothing " +
        "pending: 409 `CONFLICT`; a domain another team has verified: 409 `CONFLICT`. At most " +
        `${DOMAIN_VERIFY_PER_MINUTE} verify calls a minute per team (429 \`RATE_LIMITED\` with \`Retry-After\`). ` +
        `${notMember} Written to the audit log (\`domain.verified\`).`,
      scopes: ["teams:write"]
    }))
  )
  .middleware(AgentAuth)
{}
