/**
 * SQL of mini-app packages. Every read is scoped by the owner in SQL, so
 * another account's package is never found (404). The archive is a `bytea`
 * of the request's exact bytes, read back only by the archive route.
 */
import { MiniAppManifest, MiniAppPackage, MiniAppReviewState, TapUrl } from "@herald/api"
import { Context, Effect, Layer, Option, Schema, SchemaGetter } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { countLocked, LockSpace } from "../db/AccountLocks.ts"

const isTapUrl = Schema.is(TapUrl)

/**
 * A stored manifest as it reads today: a `privacyUrl` or `supportUrl` the
 * link rule refuses since (issue 30: `javascript:`, `data:`, …) was accepted
 * before it, and is left out rather than shown, so the package still reads.
 */
const withoutRefusedLinks = (stored: unknown): unknown => {
  if (typeof stored !== "object" || stored === null) return stored
  const manifest: Record<string, unknown> = { ...stored }
  for (const key of ["privacyUrl", "supportUrl"]) {
    if (key in manifest && !isTapUrl(manifest[key])) delete manifest[key]
  }
  return manifest
}

const StoredManifest = Schema.Unknown.pipe(Schema.decodeTo(MiniAppManifest, {
  decode: SchemaGetter.transform(withoutRefusedLinks as (stored: unknown) => typeof MiniAppManifest.Encoded),
  encode: SchemaGetter.transform((manifest): unknown => manifest)
}))

/** A package row, without its archive bytes. */
export const PackageRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  manifest: StoredManifest,
  archiveBytes: Schema.Number,
  archiveSha256: Schema.String,
  signature: Schema.String,
  keyId: Schema.String,
  reviewState: MiniAppReviewState,
  createdAt: Schema.String
})
export type PackageRow = typeof PackageRow.Type

/** The MiniAppPackage record of a row; `installUrl` is under the server's public URL. */
export const packageRecord = (publicUrl: string) => (row: PackageRow): MiniAppPackage =>
  new MiniAppPackage({
    packageId: row.id,
    manifest: row.manifest,
    archiveBytes: row.archiveBytes,
    archiveSha256: row.archiveSha256,
    signature: row.signature,
    createdAt: row.createdAt,
    installUrl: `${publicUrl}/mini-apps/${row.id}/install`,
    reviewState: row.reviewState
  })

export interface NewPackage {
  readonly id: string
  readonly userId: string
  readonly manifest: MiniAppManifest
  readonly archive: Uint8Array
  readonly archiveSha256: string
  readonly signature: string
  readonly keyId: string
}

/** Which review states a read sees. */
export type Visibility = "installable" | "available"

const ArchiveRow = Schema.Struct({ archive: Schema.Uint8Array, archiveSha256: Schema.String })

export class PackagesRepo extends Context.Service<PackagesRepo, {
  /** The owner's packages in `visibility`, newest first. */
  readonly list: (userId: string, visibility: Visibility) => Effect.Effect<ReadonlyArray<PackageRow>>
  readonly get: (userId: string, id: string, visibility: Visibility) => Effect.Effect<Option.Option<PackageRow>>
  /** The owner's package with these exact bytes (any review state), if published before. */
  readonly findByDigest: (userId: string, archiveSha256: string) => Effect.Effect<Option.Option<PackageRow>>
  readonly archive: (
    userId: string,
    id: string,
    visibility: Visibility
  ) => Effect.Effect<Option.Option<{ readonly archive: Uint8Array; readonly archiveSha256: string }>>
  /**
   * Packages the owner keeps (every state: rows are immutable and never deleted by the owner), counted
   * under the owner's lock of publishes (in the caller's transaction).
   */
  readonly countLocked: (userId: string) => Effect.Effect<number>
  /** Inserts; false when the owner already has these bytes (a concurrent publish of the same archive). */
  readonly insert: (row: NewPackage) => Effect.Effect<boolean>
}>()("herald/PackagesRepo") {
  static readonly layer = Layer.effect(PackagesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, user_id, manifest, archive_bytes, archive_sha256, signature, key_id, review_state, created_at`
    const states = (visibility: Visibility) =>
      visibility === "installable" ? sql`review_state = 'personal-only'` : sql`review_state <> 'removed'`

    const list = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, visibility: Schema.Literals(["installable", "available"]) }),
      Result: PackageRow,
      execute: ({ userId, visibility }) =>
        sql`SELECT ${columns} FROM mini_app_packages WHERE user_id = ${userId} AND ${states(visibility)} ORDER BY id DESC`
    })
    const get = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, visibility: Schema.Literals(["installable", "available"]) }),
      Result: PackageRow,
      execute: ({ id, userId, visibility }) =>
        sql`SELECT ${columns} FROM mini_app_packages WHERE id = ${id} AND user_id = ${userId} AND ${states(visibility)}`
    })
    const byDigest = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, archiveSha256: Schema.String }),
      Result: PackageRow,
      execute: ({ archiveSha256, userId }) =>
        sql`SELECT ${columns} FROM mini_app_packages WHERE user_id = ${userId} AND archive_sha256 = ${archiveSha256}`
    })
    const archive = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, visibility: Schema.Literals(["installable", "available"]) }),
      Result: ArchiveRow,
      execute: ({ id, userId, visibility }) =>
        sql`SELECT archive, archive_sha256 FROM mini_app_packages
            WHERE id = ${id} AND user_id = ${userId} AND ${states(visibility)}`
    })

    return PackagesRepo.of({
      list: (userId, visibility) => list({ userId, visibility }).pipe(Effect.orDie),
      get: (userId, id, visibility) => get({ userId, id, visibility }).pipe(Effect.orDie),
      findByDigest: (userId, archiveSha256) => byDigest({ userId, archiveSha256 }).pipe(Effect.orDie),
      archive: (userId, id, visibility) => archive({ userId, id, visibility }).pipe(Effect.orDie),
      countLocked: (userId) =>
        countLocked(sql, LockSpace.packages, userId, sql`SELECT count(*)::int AS n FROM mini_app_packages WHERE user_id = ${userId}`),
      insert: (row) =>
        sql`INSERT INTO mini_app_packages
              (id, user_id, app_id, version, manifest, archive, archive_bytes, archive_sha256, signature, key_id)
            VALUES (${row.id}, ${row.userId}, ${row.manifest.appId}, ${row.manifest.version},
                    ${JSON.stringify(row.manifest)}::jsonb, ${Buffer.from(row.archive.buffer, row.archive.byteOffset, row.archive.byteLength)}, ${row.archive.byteLength},
                    ${row.archiveSha256}, ${row.signature}, ${row.keyId})
            ON CONFLICT (user_id, archive_sha256) DO NOTHING
            RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)
    })
  }))
}
