/**
 * SQL of a team's email domain: the columns `pending_domain`, `domain_token`,
 * `verified_domain` and `domain_verified_at` of `teams`. The service has
 * already checked the caller's standing; writes run in its transaction after
 * the team row is locked (`lock`), so a set, a clear and a verify of one team
 * happen one after another.
 */
import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlError, SqlSchema } from "effect/sql"

/** A team's domain columns. */
export interface DomainState {
  readonly pendingDomain: string | null
  readonly domainToken: string | null
  readonly verifiedDomain: string | null
}

const DomainRow = Schema.Struct({
  pendingDomain: Schema.NullOr(Schema.String),
  domainToken: Schema.NullOr(Schema.String),
  verifiedDomain: Schema.NullOr(Schema.String)
})

/** The verified domain is another team's already (the unique index `teams_verified_domain_key`). */
export class DomainTaken extends Data.TaggedError("DomainTaken")<{}> {}

const isUniqueViolation = (error: unknown) =>
  SqlError.isSqlError(error) && (error.reason.cause as { readonly code?: unknown } | undefined)?.code === "23505"

export class DomainsRepo extends Context.Service<DomainsRepo, {
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The team's domain columns, its row locked for the rest of the transaction; undefined when no such team. */
  readonly lock: (teamId: string) => Effect.Effect<DomainState | undefined>
  /** The team's domain columns, unlocked. */
  readonly read: (teamId: string) => Effect.Effect<DomainState | undefined>
  /** Whether a team other than `teamId` has verified `domain` (any case). */
  readonly verifiedElsewhere: (teamId: string, domain: string) => Effect.Effect<boolean>
  readonly setPending: (teamId: string, domain: string, token: string) => Effect.Effect<void>
  /** Clears the pending domain, its token and the verified domain. */
  readonly clear: (teamId: string) => Effect.Effect<void>
  /** The pending domain becomes the verified one at `at`; DomainTaken when another team holds it. */
  readonly markVerified: (teamId: string, domain: string, at: Date) => Effect.Effect<void, DomainTaken>
}>()("herald/DomainsRepo") {
  static readonly layer = Layer.effect(DomainsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = SqlSchema.findOneOption({
      Request: Schema.Struct({ teamId: Schema.String, forUpdate: Schema.Boolean }),
      Result: DomainRow,
      execute: ({ forUpdate, teamId }) =>
        sql`SELECT pending_domain, domain_token, verified_domain FROM teams
            WHERE id = ${teamId}${forUpdate ? sql` FOR UPDATE` : sql``}`
    })
    const state = (teamId: string, forUpdate: boolean) =>
      find({ teamId, forUpdate }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie)

    const elsewhere = SqlSchema.findAll({
      Request: Schema.Struct({ teamId: Schema.String, domain: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      // lower(verified_domain) is the unique index's expression, so this is an index lookup.
      execute: ({ domain, teamId }) =>
        sql`SELECT id FROM teams WHERE lower(verified_domain) = lower(${domain}) AND id <> ${teamId} LIMIT 1`
    })

    return DomainsRepo.of({
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      lock: (teamId) => state(teamId, true),
      read: (teamId) => state(teamId, false),
      verifiedElsewhere: (teamId, domain) =>
        elsewhere({ teamId, domain }).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      setPending: (teamId, domain, token) =>
        sql`UPDATE teams SET pending_domain = ${domain}, domain_token = ${token} WHERE id = ${teamId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      clear: (teamId) =>
        sql`UPDATE teams SET pending_domain = NULL, domain_token = NULL, verified_domain = NULL, domain_verified_at = NULL
            WHERE id = ${teamId}`.pipe(Effect.asVoid, Effect.orDie),
      markVerified: (teamId, domain, at) =>
        sql`UPDATE teams SET verified_domain = ${domain}, domain_verified_at = ${at}, pending_domain = NULL, domain_token = NULL
            WHERE id = ${teamId}`.pipe(
          Effect.asVoid,
          Effect.catch((error) => isUniqueViolation(error) ? Effect.fail(new DomainTaken()) : Effect.die(error))
        )
    })
  }))
}
