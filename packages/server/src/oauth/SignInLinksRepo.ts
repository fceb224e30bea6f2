/**
 * SQL of one-time sign-in links (`sign_in_links`): found by the SHA-256 hash
 * of their `hll_…` secret only. Validity is decided by the database clock
 * (`now()`) in the same statement that spends the link, so two redemptions
 * racing for one link cannot both succeed.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

const Created = Schema.Struct({ expiresAt: Schema.String })
const Redeemed = Schema.Struct({ userId: Schema.String })

export class SignInLinksRepo extends Context.Service<SignInLinksRepo, {
  /** Stores a link valid for `ttlSeconds` from now; answers its expiry (ISO). */
  readonly insert: (link: { readonly tokenHash: string; readonly userId: string; readonly ttlSeconds: number }) => Effect.Effect<string>
  /** Spends a live, unused link; its person, or none for an unknown, used or expired link. */
  readonly redeem: (tokenHash: string) => Effect.Effect<Option.Option<string>>
}>()("herald/SignInLinksRepo") {
  static readonly layer = Layer.effect(SignInLinksRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ tokenHash: Schema.String, userId: Schema.String, ttlSeconds: Schema.Int }),
      Result: Created,
      execute: (link) =>
        sql`INSERT INTO sign_in_links (token_hash, user_id, expires_at)
            VALUES (${link.tokenHash}, ${link.userId}, now() + make_interval(secs => ${link.ttlSeconds}))
            RETURNING expires_at`
    })

    const redeem = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Redeemed,
      execute: (tokenHash) =>
        sql`UPDATE sign_in_links SET used_at = now()
            WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
            RETURNING user_id`
    })

    return SignInLinksRepo.of({
      insert: (link) => insert(link).pipe(Effect.map((row) => row.expiresAt), Effect.orDie),
      redeem: (tokenHash) => redeem(tokenHash).pipe(Effect.map(Option.map((row) => row.userId)), Effect.orDie)
    })
  }))
}
