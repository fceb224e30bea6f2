/**
 * Gateway passes and sessions (decisions.md). A person who may use a
 * connector (its owner, or a member of the team or family of the on-call
 * group it names) asks the Person API for a one-time pass that lives 60 s;
 * the gateway, calling with its owner's token, exchanges it for a 12-hour
 * session bound to the connector and the person, and revalidates that
 * session on every request — the connector still there, the session not
 * expired, the person still allowed. Only SHA-256 hashes of passes and
 * session tokens are stored.
 */
import { ConnectorAccess, ConnectorPass, NotFound, PassInvalid } from "@herald/api"
import type { ConnectorAccessRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { hashSecret } from "../auth/Secrets.ts"
import { ConnectorsRepo } from "./ConnectorsRepo.ts"

export const PASS_LIFETIME_MS = 60_000
export const SESSION_LIFETIME_MS = 12 * 3_600_000

const token = (prefix: "hcp" | "hcs") => `${prefix}_${randomBytes(32).toString("base64url")}`
const invalid = (what: string) => new PassInvalid({ error: `The ${what} is not valid for this connector.` })

export class Passes extends Context.Service<Passes, {
  /** Person API: a one-time pass for a connector the person may use (else 404). */
  readonly issue: (personId: string, connectorId: string) => Effect.Effect<ConnectorPass, NotFound>
  /** Agent API (the gateway, as the connector's owner): consume a pass or revalidate a session. */
  readonly access: (ownerId: string, connectorId: string, input: ConnectorAccessRequest) => Effect.Effect<ConnectorAccess, PassInvalid>
}>()("herald/Passes") {
  static readonly layer = Layer.effect(Passes, Effect.gen(function*() {
    const repo = yield* ConnectorsRepo

    const issue = Effect.fn("Passes.issue")(function*(personId: string, connectorId: string) {
      if (!(yield* repo.mayUse(personId, connectorId))) return yield* new NotFound({ error: "Connector not found." })
      const pass = token("hcp")
      const expiresAt = new Date((yield* Clock.currentTimeMillis) + PASS_LIFETIME_MS).toISOString()
      yield* repo.insertPass({ passHash: hashSecret(pass), connectorId, userId: personId, expiresAt })
      return new ConnectorPass({ pass, expiresAt })
    })

    const access = Effect.fn("Passes.access")(function*(ownerId: string, connectorId: string, input: ConnectorAccessRequest) {
      const nowMs = yield* Clock.currentTimeMillis
      const now = new Date(nowMs).toISOString()
      if ("pass" in input) {
        // Consumed even if the person turns out not to be allowed: a pass is spent by its first use.
        const userId = yield* repo.consumePass(ownerId, connectorId, hashSecret(input.pass), now)
        if (userId === undefined || !(yield* repo.mayUse(userId, connectorId))) return yield* invalid("pass")
        const session = token("hcs")
        const expiresAt = new Date(nowMs + SESSION_LIFETIME_MS).toISOString()
        yield* repo.insertSession({ tokenHash: hashSecret(session), connectorId, userId, expiresAt })
        return new ConnectorAccess({ session, userId, expiresAt })
      }
      const found = yield* repo.findSession(ownerId, connectorId, hashSecret(input.session), now)
      if (found === undefined || !(yield* repo.mayUse(found.userId, connectorId))) return yield* invalid("session")
      return new ConnectorAccess({ session: input.session, userId: found.userId, expiresAt: found.expiresAt })
    })

    return Passes.of({ issue, access })
  }))
}
