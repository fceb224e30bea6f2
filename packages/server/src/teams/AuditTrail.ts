/**
 * Writing the team audit log. decisions.md: every change to a team, its
 * members, invites, device groups, domain, shared apps, shared services,
 * on-call groups, overrides and pages is one entry, written in the same
 * transaction as the change — so `record` runs inside the caller's
 * `sql.withTransaction` and commits or rolls back with it.
 *
 * Who acted comes from the request: the agent's account and token, or the
 * signed-in person (no token), with the client's address and user agent.
 * The actor's name is copied at write time, so the entry still names them
 * after they leave.
 */
import { CurrentAgent, CurrentPerson } from "@herald/api"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { AddressThrottle } from "../http/AddressThrottle.ts"
import { clientAddress } from "../http/ClientAddress.ts"
import { headerText } from "../http/HeaderText.ts"
import { makeId } from "../lib/Ids.ts"

/** Who made a change, as the audit log records it. */
export interface AuditActor {
  readonly userId: string | null
  readonly tokenId: string | null
  readonly ip: string | null
  readonly userAgent: string | null
}

/** One change, as `action` (`member.role_changed`, `invite.created`, …) on a target. */
export interface AuditChange {
  readonly teamId: string
  readonly action: string
  readonly targetType: string | null
  readonly targetId: string | null
  readonly metadata?: Record<string, unknown> | null
}

/** The request's client address (behind a trusted proxy, the client it forwards for: http/ClientAddress.ts) and user agent. */
const requestOrigin = Effect.gen(function*() {
  const request = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
  if (Option.isNone(request)) return { ip: null, userAgent: null }
  const r = request.value
  const { trusted } = yield* AddressThrottle
  const forwarded = r.headers["x-forwarded-for"]
  return {
    ip: clientAddress(Option.getOrUndefined(r.peerAddress), typeof forwarded === "string" ? forwarded : undefined, trusted) ?? null,
    // Bounded: the header is the caller's to choose. As sent: UTF-8, not Node's Latin-1 reading of it.
    userAgent: typeof r.headers["user-agent"] === "string" ? headerText(r.headers["user-agent"], 512) : null
  }
})

/** The actor of an Agent API request: the token's account and the token. */
export const agentActor: Effect.Effect<AuditActor, never, CurrentAgent | AddressThrottle> = Effect.gen(function*() {
  const agent = yield* CurrentAgent
  return { userId: agent.userId, tokenId: agent.tokenId, ...(yield* requestOrigin) }
})

/** The actor of a Person API request: the signed-in person (no token). */
export const personActor: Effect.Effect<AuditActor, never, CurrentPerson | AddressThrottle> = Effect.gen(function*() {
  const person = yield* CurrentPerson
  return { userId: person.userId, tokenId: null, ...(yield* requestOrigin) }
})

/** The operator at the command line (`herald admin …`): no account, no address. */
export const operatorActor: AuditActor = { userId: null, tokenId: null, ip: null, userAgent: "herald admin" }

export class AuditTrail extends Context.Service<AuditTrail, {
  /** Writes one entry; run it inside the transaction that makes the change. */
  readonly record: (actor: AuditActor, change: AuditChange) => Effect.Effect<void>
}>()("herald/AuditTrail") {
  static readonly layer = Layer.effect(AuditTrail, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return AuditTrail.of({
      record: Effect.fn("AuditTrail.record")(function*(actor: AuditActor, change: AuditChange) {
        const id = yield* makeId("aud")
        const at = new Date(yield* Clock.currentTimeMillis)
        const metadata = change.metadata === undefined || change.metadata === null ? null : JSON.stringify(change.metadata)
        yield* sql`
          INSERT INTO team_audit (id, team_id, actor_user_id, actor_name, actor_token_id, action, target_type, target_id,
                                  metadata, ip, user_agent, created_at)
          VALUES (${id}, ${change.teamId}, ${actor.userId}, (SELECT name FROM users WHERE id = ${actor.userId}),
                  ${actor.tokenId}, ${change.action}, ${change.targetType}, ${change.targetId}, ${metadata}::jsonb,
                  ${actor.ip}, ${actor.userAgent}, ${at})`.pipe(Effect.orDie)
      })
    })
  }))
}
