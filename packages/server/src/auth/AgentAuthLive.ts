/**
 * The Agent API's bearer middleware: authenticates the `hld_…` token, then
 * checks the scopes the guarded endpoint declares (`RequiredScopes`), listing
 * every missing one in a 403 `MISSING_SCOPE`.
 */
import { AgentAuth, CurrentAgent, MissingScope, RequiredScopes } from "@herald/api"
import { Context, Effect, Layer, Redacted } from "effect"
import { Credentials } from "./Credentials.ts"

export const AgentAuthLive = Layer.effect(AgentAuth, Effect.gen(function*() {
  const credentials = yield* Credentials
  return AgentAuth.of({
    agentToken: (httpEffect, { credential, endpoint }) =>
      Effect.gen(function*() {
        const token = yield* credentials.authenticateToken(Redacted.value(credential))
        const required = Context.getOrUndefined(endpoint.annotations, RequiredScopes) ?? []
        const missing = required.filter((scope) => !token.scopes.includes(scope))
        if (missing.length > 0) {
          return yield* new MissingScope({ error: `The token lacks scopes: ${missing.join(", ")}.`, required: missing })
        }
        return yield* Effect.provideService(httpEffect, CurrentAgent, { userId: token.userId, tokenId: token.id, scopes: token.scopes })
      })
  })
}))
