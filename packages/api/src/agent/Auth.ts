import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { TokenStatus } from "../domain/Identity.ts"
import { agentOperation } from "../Operation.ts"
import { AgentAuth } from "../Security.ts"

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.get("status", "/auth/status", { success: TokenStatus }).pipe(agentOperation({
      summary: "Describe the calling token",
      description: "Returns TokenStatus: the account the token acts as and the token's id, name, prefix, scopes, " +
        "`createdAt`, `lastUsedAt` and `expiresAt`. `lastUsedAt` is kept fresh in memory and written to the database " +
        "at most once a minute per token.",
      scopes: []
    })),
    HttpApiEndpoint.post("revoke", "/auth/revoke", { success: Ok }).pipe(agentOperation({
      summary: "Revoke the calling token",
      description: "Revokes the calling token. Every later request with it answers 401; revocation takes effect at once " +
        "on the node that served this call and within one second on every node.",
      scopes: []
    }))
  )
  .middleware(AgentAuth)
{}
