import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { ApiToken } from "../domain/Identity.ts"
import { NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { AgentAuth } from "../Security.ts"
import { TokenId } from "../Params.ts"

export class ApiTokenList extends Schema.Class<ApiTokenList>("ApiTokenList")({
  items: Schema.Array(ApiToken)
}) {}

export class TokensGroup extends HttpApiGroup.make("tokens")
  .add(
    HttpApiEndpoint.get("list", "/tokens", { success: ApiTokenList }).pipe(agentOperation({
      summary: "List the account's tokens",
      description: "Lists the account's tokens (ApiToken), newest first, revoked ones included with `revokedAt`. " +
        "Secrets are never returned: only the identifying `prefix`. Connected remote-tool clients appear with kind `oauth`. " +
        "There is no route to create tokens: a person creates them in the Person API.",
      scopes: ["tokens:manage"]
    })),
    HttpApiEndpoint.delete("revoke", "/tokens/:id", { params: { id: TokenId }, success: Ok, error: NotFound }).pipe(
      agentOperation({
        summary: "Revoke a token of the account",
        description: "Revokes a token of the same account. Revoking an `oauth` token signs that client out: its access " +
          "token and its refresh grant are both revoked. Revoking an already revoked token answers 200 again. " +
          "Another account's token answers 404 exactly like a missing one.",
        scopes: ["tokens:manage"]
      })
    )
  )
  .middleware(AgentAuth)
{}
