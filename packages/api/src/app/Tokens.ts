import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok, Timestamp } from "../domain/Common.ts"
import { TokenCreated } from "../domain/Identity.ts"
import { Scope } from "../domain/Scope.ts"
import { NotFound } from "../errors.ts"
import { ApiTokenList, tokensPaging, TokensQuery } from "../agent/Tokens.ts"
import { personOperation } from "../Operation.ts"
import { TokenId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** Body of POST /api/app/tokens. */
export const CreateTokenRequest = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  scopes: Schema.Array(Scope).check(Schema.isMaxLength(22)),
  expiresAt: Schema.optionalKey(Schema.NullOr(Timestamp))
}).annotate({ identifier: "CreateTokenRequest" })
export type CreateTokenRequest = typeof CreateTokenRequest.Type

export class PersonTokensGroup extends HttpApiGroup.make("tokens")
  .add(
    HttpApiEndpoint.post("create", "/tokens", {
      payload: CreateTokenRequest,
      success: TokenCreated.pipe(HttpApiSchema.status(201))
    }).pipe(personOperation({
      summary: "Create an API token",
      description: "Creates an API token for an agent. The response carries the plaintext token in `secret` exactly " +
        "once; Herald stores only its SHA-256 hash. `scopes` are values of the Scope enumeration (duplicates are " +
        "collapsed); `expiresAt`, when given, must lie in the future.",
      secret: true
    })),
    HttpApiEndpoint.get("list", "/tokens", { query: TokensQuery, success: ApiTokenList }).pipe(personOperation({
      summary: "List my API tokens",
      description: "The person's API tokens, newest first; never secrets. " + tokensPaging
    })),
    HttpApiEndpoint.delete("revoke", "/tokens/:id", { params: { id: TokenId }, success: Ok, error: NotFound }).pipe(
      personOperation({
        summary: "Revoke an API token",
        description: "Revokes one of the person's tokens (for `oauth` tokens, the refresh grant too)."
      })
    )
  )
  .middleware(PersonAuth)
{}
