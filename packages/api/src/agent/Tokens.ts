import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { ApiToken } from "../domain/Identity.ts"
import { NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { AgentAuth } from "../Security.ts"
import { TokenId } from "../Params.ts"
import { IntParam } from "./History.ts"

/** Page size of `GET /tokens` (both APIs): the spec sets none, so Herald's, stated in the OpenAPI document. */
export const TOKENS_LIST_LIMIT = { default: 50, max: 100 } as const

export const TokensQuery = Schema.Struct({
  limit: Schema.optionalKey(IntParam(1, TOKENS_LIST_LIMIT.max)),
  cursor: Schema.optionalKey(TokenId)
}).annotate({ identifier: "TokensQuery" })
export type TokensQuery = typeof TokensQuery.Type

export class ApiTokenList extends Schema.Class<ApiTokenList>("ApiTokenList")({
  items: Schema.Array(ApiToken),
  /** The `cursor` of the next page; null on the last one. */
  nextCursor: Schema.NullOr(TokenId)
}) {}

/** The paging rule both token lists state. */
export const tokensPaging = `Paged newest first: \`limit\` 1–${TOKENS_LIST_LIMIT.max} (default ${TOKENS_LIST_LIMIT.default}); ` +
  "`nextCursor` is the `cursor` of the next page, null on the last one. A cursor names a token of the account; any " +
  "other answers an empty page."

export class TokensGroup extends HttpApiGroup.make("tokens")
  .add(
    HttpApiEndpoint.get("list", "/tokens", { query: TokensQuery, success: ApiTokenList }).pipe(agentOperation({
      summary: "List the account's tokens",
      description: "Lists the account's tokens (ApiToken), newest first, revoked ones included with `revokedAt`. " +
        "Secrets are never returned: only the identifying `prefix`. Connected remote-tool clients appear with kind `oauth`. " +
        "There is no route to create tokens: a person creates them in the Person API. " + tokensPaging,
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
