/**
 * A team's email domain (decisions.md "Domain", "Domain verification TXT
 * record"): the owner sets a pending domain, publishes the TXT challenge
 * `herald-verify=<token>` at `_herald-verification.<domain>`, and verifies.
 *
 * - Public mailbox domains are refused, from the `email-providers` package's
 *   list (maintained upstream, shipped in the package: no lookup at run time).
 * - A pending domain is not unique; a verified one is (the unique index
 *   `teams_verified_domain_key`, which also settles two teams verifying at once).
 * - The DNS lookup runs outside any transaction (no lock is held over the
 *   network); the change is then made in one, after checking the challenge it
 *   verified is still the pending one.
 * - A resolver failure is remembered per domain for `ERROR_CACHE_MS` (the
 *   spec: at most one minute), so a broken resolver is not asked again by
 *   every retry; a missing or different record is never remembered, so
 *   publishing it and verifying again works at once.
 * - At most `DOMAIN_VERIFY_PER_MINUTE` verify calls a minute per team (GCRA, in
 *   memory per node: a guard on DNS lookups, docs/operations.md).
 *
 * Times come from the service clock, so tests can move past the minute.
 */
import { Conflict, DOMAIN_VERIFY_PER_MINUTE, DomainNotVerified, PublicEmailDomain } from "@herald/api"
import type { Forbidden, NotFound, Team } from "@herald/api"
import { Clock, Context, Data, Effect, Layer } from "effect"
import providers from "email-providers/all.json" with { type: "json" }
import { randomBytes } from "node:crypto"
import { Gcra } from "../billing/Gcra.ts"
import type { Decision } from "../billing/Gcra.ts"
import { DnsTxt } from "./DnsTxt.ts"
import type { AuditActor } from "./AuditTrail.ts"
import { AuditTrail } from "./AuditTrail.ts"
import { DomainsRepo } from "./DomainsRepo.ts"
import { Membership, teamNotFound } from "./Membership.ts"
import { Teams } from "./Teams.ts"

/** How long a resolver failure is remembered for its domain (the spec: at most one minute). */
export const ERROR_CACHE_MS = 60_000

/** The challenge's record name and value for a domain and token (decisions.md). */
export const challengeHost = (domain: string) => `_herald-verification.${domain}`
export const challengeValue = (token: string) => `herald-verify=${token}`

const publicDomains: ReadonlySet<string> = new Set((providers as ReadonlyArray<string>).map((d) => d.toLowerCase()))

/** Whether `domain` or a parent of it (of two labels or more) is a public mailbox provider's. */
export const isPublicMailboxDomain = (domain: string): boolean => {
  const labels = domain.toLowerCase().split(".")
  for (let i = 0; i + 2 <= labels.length; i++) {
    if (publicDomains.has(labels.slice(i).join("."))) return true
  }
  return false
}

/** Over the team's verify budget; `decision` gives the `Retry-After`. */
export class VerifyThrottled extends Data.TaggedError("VerifyThrottled")<{ readonly decision: Decision }> {}

/** The resolver failed for `host` (now, or within the last minute: `cached`); a new lookup in `retryAfterMs`. */
export class LookupFailed extends Data.TaggedError("LookupFailed")<{
  readonly host: string
  readonly code: string
  readonly cached: boolean
  readonly retryAfterMs: number
}> {}

export type VerifyError = NotFound | Forbidden | Conflict | DomainNotVerified | VerifyThrottled | LookupFailed

export class Domains extends Context.Service<Domains, {
  readonly set: (actor: AuditActor, userId: string, teamId: string, domain: string) => Effect.Effect<Team, NotFound | Forbidden | PublicEmailDomain>
  readonly clear: (actor: AuditActor, userId: string, teamId: string) => Effect.Effect<Team, NotFound | Forbidden>
  readonly verify: (actor: AuditActor, userId: string, teamId: string) => Effect.Effect<Team, VerifyError>
}>()("herald/Domains") {
  static readonly layerNoDeps = Layer.effect(Domains, Effect.gen(function*() {
    const repo = yield* DomainsRepo
    const dns = yield* DnsTxt
    const membership = yield* Membership
    const audit = yield* AuditTrail
    const teams = yield* Teams

    const limiter = new Gcra(DOMAIN_VERIFY_PER_MINUTE)
    /** Domain → resolver failure and when it stops being remembered. */
    const failures = new Map<string, { readonly code: string; readonly until: number }>()
    let sweptAt = 0
    /** Forgets expired failures and whole budgets, at most once a minute (memory follows recent use). */
    const sweep = (now: number) => {
      if (now - sweptAt < 60_000) return
      sweptAt = now
      limiter.sweep(now)
      for (const [domain, failure] of failures) if (failure.until <= now) failures.delete(domain)
    }

    const current = (userId: string, teamId: string) => Effect.orDie(teams.get(userId, teamId))
    const lockTeam = (teamId: string) =>
      Effect.flatMap(repo.lock(teamId), (state) => state === undefined ? Effect.fail(teamNotFound) : Effect.succeed(state))

    const set = Effect.fn("Domains.set")(function*(actor: AuditActor, userId: string, teamId: string, input: string) {
      const domain = input.toLowerCase()
      yield* membership.require(userId, teamId, "owner")
      if (isPublicMailboxDomain(domain)) {
        return yield* new PublicEmailDomain({
          error: `${domain} is a public mailbox domain: a team's domain must be one its organization controls.`
        })
      }
      const token = randomBytes(16).toString("hex")
      return yield* repo.inTransaction(Effect.gen(function*() {
        yield* membership.require(userId, teamId, "owner", { forUpdate: true })
        const before = yield* lockTeam(teamId)
        yield* repo.setPending(teamId, domain, token)
        yield* audit.record(actor, {
          teamId,
          action: "domain.set",
          targetType: "domain",
          targetId: domain,
          metadata: { domain, replaced: before.pendingDomain }
        })
        return yield* current(userId, teamId)
      }))
    })

    const clear = Effect.fn("Domains.clear")(function*(actor: AuditActor, userId: string, teamId: string) {
      yield* membership.require(userId, teamId, "owner")
      return yield* repo.inTransaction(Effect.gen(function*() {
        yield* membership.require(userId, teamId, "owner", { forUpdate: true })
        const before = yield* lockTeam(teamId)
        if (before.pendingDomain !== null || before.verifiedDomain !== null) {
          yield* repo.clear(teamId)
          yield* audit.record(actor, {
            teamId,
            action: "domain.cleared",
            targetType: "domain",
            targetId: before.verifiedDomain ?? before.pendingDomain,
            metadata: { pendingDomain: before.pendingDomain, verifiedDomain: before.verifiedDomain }
          })
        }
        return yield* current(userId, teamId)
      }))
    })

    const takenConflict = (domain: string) => new Conflict({ error: `${domain} is already verified by another team.` })

    const verify = Effect.fn("Domains.verify")(function*(actor: AuditActor, userId: string, teamId: string) {
      yield* membership.require(userId, teamId, "owner")
      const now = yield* Clock.currentTimeMillis
      sweep(now)
      const decision = limiter.check(teamId, now)
      if (!decision.allowed) return yield* new VerifyThrottled({ decision })
      limiter.commit(teamId, decision.next)

      const state = yield* repo.read(teamId)
      const domain = state?.pendingDomain ?? null
      const token = state?.domainToken ?? null
      if (domain === null || token === null) {
        return yield* new Conflict({ error: "No domain is pending verification: set one with POST /teams/{id}/domain first." })
      }
      if (yield* repo.verifiedElsewhere(teamId, domain)) return yield* takenConflict(domain)

      const host = challengeHost(domain)
      const expected = challengeValue(token)
      const remembered = failures.get(domain)
      if (remembered !== undefined && remembered.until > now) {
        return yield* new LookupFailed({ host, code: remembered.code, cached: true, retryAfterMs: remembered.until - now })
      }
      const answer = yield* dns.lookup(host)
      if (answer._tag === "Failed") {
        const at = yield* Clock.currentTimeMillis
        failures.set(domain, { code: answer.code, until: at + ERROR_CACHE_MS })
        return yield* new LookupFailed({ host, code: answer.code, cached: false, retryAfterMs: ERROR_CACHE_MS })
      }
      failures.delete(domain)
      if (answer._tag !== "Found" || !answer.values.includes(expected)) {
        const found = answer._tag === "NoSuchName"
          ? `${host} does not exist (NXDOMAIN)`
          : answer._tag === "NoRecords" || answer.values.length === 0
          ? `${host} has no TXT record`
          : `${host} has TXT ${answer.values.map((v) => JSON.stringify(v)).join(", ")} but not the challenge`
        return yield* new DomainNotVerified({
          error: `Domain not verified: ${found}. Publish a TXT record at ${host} with the value ${expected}, then verify again.`
        })
      }

      return yield* repo.inTransaction(Effect.gen(function*() {
        yield* membership.require(userId, teamId, "owner", { forUpdate: true })
        const locked = yield* lockTeam(teamId)
        // The owner may have set another domain (or cleared it) while the lookup ran: that one is unverified.
        if (locked.pendingDomain !== domain || locked.domainToken !== token) {
          return yield* new Conflict({ error: "The team's pending domain changed while it was being verified; verify again." })
        }
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* repo.markVerified(teamId, domain, at).pipe(Effect.catchTag("DomainTaken", () => Effect.fail(takenConflict(domain))))
        yield* audit.record(actor, {
          teamId,
          action: "domain.verified",
          targetType: "domain",
          targetId: domain,
          metadata: { domain, previous: locked.verifiedDomain }
        })
        return yield* current(userId, teamId)
      }))
    })

    return Domains.of({ set, clear, verify })
  }))

  static readonly layer = Domains.layerNoDeps.pipe(Layer.provide([DomainsRepo.layer, DnsTxt.layer]))
}
