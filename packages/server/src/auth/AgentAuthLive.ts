/**
 * The Agent API's bearer middleware: authenticates the `hld_…` token, then
 * checks the scopes the guarded endpoint declares (`RequiredScopes`), listing
 * every missing one in a 403 `MISSING_SCOPE`.
 */
import { AgentAuth, CurrentAgent, MissingScope, RequiredScopes } from "@herald/api"
import { Context, Effect, Layer, Redacted } from "effect"
import type { HttpServerResponse } from "effect/http/HttpServerResponse"
import type { unhandled } from "effect/Types"
import { Credentials } from "./Credentials.ts"

export const AgentAuthLive = Layer.effect(AgentAuth, Effect.gen(function*() {
  const credentials = yield* Credentials
  return AgentAuth.of({
    // Every agent request passes here: plain `flatMap`, no generator.
    agentToken: (httpEffect, { credential, endpoint }) =>
      Effect.flatMap(credentials.authenticateToken(Redacted.value(credential)), (token): Effect.Effect<HttpServerResponse, MissingScope | unhandled> => {
        const required = Context.getOrUndefined(endpoint.annotations, RequiredScopes) ?? []
        const missing = required.filter((scope) => !token.scopes.includes(scope))
        return missing.length > 0
          ? Effect.fail(new MissingScope({ error: `The token lacks scopes: ${missing.join(", ")}.`, required: missing }))
          : Effect.provideService(httpEffect, CurrentAgent, { userId: token.userId, tokenId: token.id, scopes: token.scopes })
      })
  })
}))
