/**
 * SQL of sign-in's shared state (migrations/0019_sign_in.ts): the window of
 * e-mailed links per address (one row per hashed address, counted in the
 * statement that takes a request, so concurrent requests on any node count
 * exactly), and WebAuthn challenges, each spent by the statement that reads it.
 * Validity is decided by the database clock.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

export const Window = Schema.Struct({ count: Schema.Int, retryAfterSeconds: Schema.Number })
export type Window = typeof Window.Type

export type ChallengePurpose = "register" | "authenticate"

export interface NewChallenge {
  readonly id: string
  readonly purpose: ChallengePurpose
  readonly challenge: string
  readonly userId: string | null
  readonly ttlSeconds: number
}

const Spent = Schema.Struct({ challenge: Schema.String, userId: Schema.NullOr(Schema.String) })

export class SignInRepo extends Context.Service<SignInRepo, {
  /** Counts one request for the address (hashed): its count in the current window and the seconds left in it. */
  readonly countEmail: (emailHash: string, windowSeconds: number) => Effect.Effect<Window>
  readonly insertChallenge: (challenge: NewChallenge) => Effect.Effect<void>
  /** Spends a live challenge of that purpose: its value and person, or none for an unknown, used or expired one. */
  readonly spendChallenge: (id: string, purpose: ChallengePurpose) => Effect.Effect<Option.Option<typeof Spent.Type>>
  /** Deletes expired challenges and e-mail windows older than `windowSeconds`, up to `limit` of each; how many. */
  readonly deleteExpired: (windowSeconds: number, limit: number) => Effect.Effect<number>
}>()("herald/SignInRepo") {
  static readonly layer = Layer.effect(SignInRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // A fixed window from the first request: the row is locked by the upsert, so requests racing on any
    // node each see the count with theirs included.
    const countEmail = SqlSchema.findOne({
      Request: Schema.Struct({ emailHash: Schema.String, windowSeconds: Schema.Int }),
      Result: Window,
      execute: ({ emailHash, windowSeconds }) =>
        sql`INSERT INTO sign_in_email_windows AS w (email_hash, window_start, count)
            VALUES (${emailHash}, now(), 1)
            ON CONFLICT (email_hash) DO UPDATE SET
              window_start = CASE WHEN w.window_start <= now() - make_interval(secs => ${windowSeconds})
                                  THEN now() ELSE w.window_start END,
              count = CASE WHEN w.window_start <= now() - make_interval(secs => ${windowSeconds})
                           THEN 1 ELSE w.count + 1 END
            RETURNING count,
              greatest(0, extract(epoch FROM (window_start + make_interval(secs => ${windowSeconds}) - now())))::float8
                AS retry_after_seconds`
    })

    const insertChallenge = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        purpose: Schema.Literals(["register", "authenticate"]),
        challenge: Schema.String,
        userId: Schema.NullOr(Schema.String),
        ttlSeconds: Schema.Int
      }),
      execute: (c) =>
        sql`INSERT INTO webauthn_challenges (id, purpose, challenge, user_id, expires_at)
            VALUES (${c.id}, ${c.purpose}, ${c.challenge}, ${c.userId}, now() + make_interval(secs => ${c.ttlSeconds}))`
    })

    const spendChallenge = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, purpose: Schema.String }),
      Result: Spent,
      execute: ({ id, purpose }) =>
        sql`DELETE FROM webauthn_challenges WHERE id = ${id} AND purpose = ${purpose} AND expires_at > now()
            RETURNING challenge, user_id`
    })

    const deleteExpired = SqlSchema.findOne({
      Request: Schema.Struct({ windowSeconds: Schema.Int, limit: Schema.Int }),
      Result: Schema.Struct({ deleted: Schema.Int }),
      execute: ({ limit, windowSeconds }) =>
        sql`WITH challenges AS (
              DELETE FROM webauthn_challenges WHERE id IN (
                SELECT id FROM webauthn_challenges WHERE expires_at <= now() LIMIT ${limit})
              RETURNING 1),
            windows AS (
              DELETE FROM sign_in_email_windows WHERE email_hash IN (
                SELECT email_hash FROM sign_in_email_windows
                WHERE window_start <= now() - make_interval(secs => ${windowSeconds}) LIMIT ${limit})
              RETURNING 1)
            SELECT ((SELECT count(*) FROM challenges) + (SELECT count(*) FROM windows))::int AS deleted`
    })

    return SignInRepo.of({
      countEmail: (emailHash, windowSeconds) => countEmail({ emailHash, windowSeconds }).pipe(Effect.orDie),
      insertChallenge: (c) => insertChallenge(c).pipe(Effect.orDie),
      spendChallenge: (id, purpose) => spendChallenge({ id, purpose }).pipe(Effect.orDie),
      deleteExpired: (windowSeconds, limit) => deleteExpired({ windowSeconds, limit }).pipe(Effect.map((r) => r.deleted), Effect.orDie)
    })
  }))
}
