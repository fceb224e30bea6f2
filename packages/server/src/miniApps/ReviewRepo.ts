/**
 * SQL of package review: review-state changes, offers (the per-package
 * minute held by a conditional UPDATE of `last_offered_at`) and reports.
 * Every statement is scoped by the owner, so another account's package is
 * never found (404).
 */
import { MiniAppReport, MiniAppReviewState } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { PackageRow } from "./PackagesRepo.ts"

/** A package row with its review data. */
export const ReviewRow = Schema.Struct({
  ...PackageRow.fields,
  lastOfferedAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.String,
  reportCount: Schema.Number
})
export type ReviewRow = typeof ReviewRow.Type

/** What a locked read tells a transition or an offer. */
export const StateRow = Schema.Struct({
  reviewState: MiniAppReviewState,
  lastOfferedAt: Schema.NullOr(Schema.String),
  reportCount: Schema.Number
})
export type StateRow = typeof StateRow.Type

const ReportRow = Schema.Struct({
  id: Schema.String,
  packageId: Schema.String,
  reason: Schema.String,
  detail: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})

export class ReviewRepo extends Context.Service<ReviewRepo, {
  /** Every package of the owner, any state, newest first. */
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<ReviewRow>>
  /** Every report about the owner's packages, oldest first. */
  readonly reports: (userId: string) => Effect.Effect<ReadonlyArray<MiniAppReport>>
  /** The owner's package, locked for the rest of the caller's transaction. */
  readonly lock: (userId: string, id: string) => Effect.Effect<Option.Option<StateRow>>
  /** Sets the state of the owner's package (locked by the caller) and reads it back. */
  readonly setState: (userId: string, id: string, state: MiniAppReviewState) => Effect.Effect<ReviewRow>
  readonly get: (userId: string, id: string) => Effect.Effect<Option.Option<ReviewRow>>
  /**
   * Stamps the offer when the package is the owner's, installable, and not
   * offered since `notBefore`; false otherwise (one statement, so of two
   * concurrent offers only one stamps).
   */
  readonly stampOffer: (userId: string, id: string, at: string, notBefore: string) => Effect.Effect<boolean>
  readonly insertReport: (report: MiniAppReport & { readonly userId: string }) => Effect.Effect<MiniAppReport>
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/ReviewRepo") {
  static readonly layer = Layer.effect(ReviewRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql`SELECT p.id, p.user_id, p.manifest, p.archive_bytes, p.archive_sha256, p.signature, p.key_id,
                              p.review_state, p.created_at, p.last_offered_at, p.updated_at,
                              (SELECT count(*)::int FROM mini_app_reports r WHERE r.package_id = p.id) AS report_count
                       FROM mini_app_packages p`

    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: ReviewRow,
      execute: (userId) => sql`${select} WHERE p.user_id = ${userId} ORDER BY p.id DESC`
    })
    const get = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String }),
      Result: ReviewRow,
      execute: ({ id, userId }) => sql`${select} WHERE p.id = ${id} AND p.user_id = ${userId}`
    })
    const reports = SqlSchema.findAll({
      Request: Schema.String,
      Result: ReportRow,
      execute: (userId) =>
        sql`SELECT r.id, r.package_id, r.reason, r.detail, r.created_at
            FROM mini_app_reports r JOIN mini_app_packages p ON p.id = r.package_id
            WHERE p.user_id = ${userId} ORDER BY r.id`
    })
    const lock = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String }),
      Result: StateRow,
      execute: ({ id, userId }) =>
        sql`SELECT review_state, last_offered_at,
                   (SELECT count(*)::int FROM mini_app_reports r WHERE r.package_id = p.id) AS report_count
            FROM mini_app_packages p WHERE p.id = ${id} AND p.user_id = ${userId} FOR UPDATE OF p`
    })

    return ReviewRepo.of({
      list: (userId) => list(userId).pipe(Effect.orDie),
      reports: (userId) => Effect.map(reports(userId), (rows) => rows.map((r) => new MiniAppReport(r))).pipe(Effect.orDie),
      lock: (userId, id) => lock({ userId, id }).pipe(Effect.orDie),
      get: (userId, id) => get({ userId, id }).pipe(Effect.orDie),
      setState: (userId, id, state) =>
        sql`UPDATE mini_app_packages SET review_state = ${state}, updated_at = now()
            WHERE id = ${id} AND user_id = ${userId}`.pipe(
          Effect.andThen(get({ userId, id })),
          Effect.map(Option.getOrThrow),
          Effect.orDie
        ),
      stampOffer: (userId, id, at, notBefore) =>
        sql`UPDATE mini_app_packages SET last_offered_at = ${at}
            WHERE id = ${id} AND user_id = ${userId} AND review_state = 'personal-only'
              AND (last_offered_at IS NULL OR last_offered_at <= ${notBefore})
            RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie),
      insertReport: ({ userId, ...report }) =>
        sql`INSERT INTO mini_app_reports (id, package_id, user_id, reason, detail, created_at)
            VALUES (${report.id}, ${report.packageId}, ${userId}, ${report.reason}, ${report.detail}, ${report.createdAt})`.pipe(
          Effect.as(new MiniAppReport(report)),
          Effect.orDie
        ),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
