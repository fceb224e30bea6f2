/**
 * Mini-app packages: publish (validate, store the request's bytes, sign),
 * and the owner's reads, one of them with its signature checked for the
 * install page. Packages are immutable: nothing here changes one.
 * Review-state changes are miniApps review (another service).
 */
import { Forbidden, MiniAppInstallView, MiniAppPackage, MiniAppSignatureCheck, NotFound, ValidationFailed } from "@herald/api"
import type { LimitReached, MiniAppArchive } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { MINI_APP_MAX_PACKAGES } from "../config/Limits.ts"
import { insertWithinLimit } from "../db/AccountLocks.ts"
import { makeId } from "../lib/Ids.ts"
import { packageRecord, PackagesRepo } from "./PackagesRepo.ts"
import { archiveIssues, sha256Hex } from "./Publish.ts"
import { Signing } from "./Signing.ts"

const packageNotFound = new NotFound({ error: "Package not found." })

export interface Published {
  readonly pkg: MiniAppPackage
  /** False: the same bytes were published before; `pkg` is that package. */
  readonly created: boolean
}

export class Packages extends Context.Service<Packages, {
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<MiniAppPackage>>
  readonly get: (userId: string, packageId: string) => Effect.Effect<MiniAppPackage, NotFound>
  /** `get`, with its signature checked against every listed key (the install page). */
  readonly inspect: (userId: string, packageId: string) => Effect.Effect<MiniAppInstallView, NotFound>
  /** The archive's exact bytes and their SHA-256 (hex), for an installable package of the owner. */
  readonly archive: (
    userId: string,
    packageId: string
  ) => Effect.Effect<{ readonly archive: Uint8Array; readonly archiveSha256: string }, NotFound>
  /** Publishes `raw` (the request's bytes), which decoded to `archive`. */
  readonly publish: (
    userId: string,
    archive: MiniAppArchive,
    raw: Uint8Array
  ) => Effect.Effect<Published, ValidationFailed | Forbidden | LimitReached>
}>()("herald/Packages") {
  static readonly layer = Layer.effect(Packages, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PackagesRepo
    const signing = yield* Signing
    const { publicUrl } = yield* AppConfig

    const toRecord = packageRecord(publicUrl)

    const existing = (userId: string, digest: string) =>
      Effect.map(repo.findByDigest(userId, digest), Option.map((row): Published => ({ pkg: toRecord(row), created: false })))

    const get = (userId: string, packageId: string) =>
      Effect.flatMap(repo.get(userId, packageId, "available"), Option.match({
        onNone: () => Effect.fail(packageNotFound),
        onSome: (row) => Effect.succeed(toRecord(row))
      }))

    const inspect = Effect.fn("Packages.inspect")(function*(userId: string, packageId: string) {
      const pkg = yield* get(userId, packageId)
      const key = yield* signing.verify(pkg.packageId, pkg.archiveSha256, pkg.archiveBytes, pkg.signature)
      const signature = new MiniAppSignatureCheck({
        algorithm: "Ed25519",
        verified: Option.isSome(key),
        keyId: Option.match(key, { onNone: () => null, onSome: (k) => k.keyId }),
        publicKey: Option.match(key, { onNone: () => null, onSome: (k) => k.publicKey }),
        keyRetired: Option.match(key, { onNone: () => false, onSome: (k) => k.retiredAt !== null })
      })
      return new MiniAppInstallView({
        package: pkg,
        signature,
        installable: pkg.reviewState === "personal-only" && signature.verified
      })
    })

    return Packages.of({
      list: (userId) => Effect.map(repo.list(userId, "installable"), (rows) => rows.map(toRecord)),
      get,
      inspect,
      archive: (userId, packageId) =>
        Effect.flatMap(repo.archive(userId, packageId, "installable"), Option.match({
          onNone: () => Effect.fail(packageNotFound),
          onSome: Effect.succeed
        })),
      publish: (userId, archive, raw) =>
        Effect.gen(function*() {
          const issues = archiveIssues(archive)
          if (issues.length > 0) {
            return yield* Effect.fail(new ValidationFailed({ error: "The request failed validation.", issues: [...issues] }))
          }
          if (archive.manifest.publisher.id !== userId) {
            return yield* Effect.fail(new Forbidden({ error: "manifest.publisher.id must be the account's user id." }))
          }
          const digest = sha256Hex(raw)
          // The same bytes again: the existing package, without counting against the limit.
          const before = yield* existing(userId, digest)
          if (Option.isSome(before)) return before.value
          const id = yield* makeId("pkg")
          const { keyId, signature } = yield* signing.sign(id, digest, raw.byteLength)
          const inserted = yield* insertWithinLimit(sql, {
            count: repo.countLocked(userId),
            limit: MINI_APP_MAX_PACKAGES,
            what: "mini-app packages"
          }, repo.insert({ id, userId, manifest: archive.manifest, archive: raw, archiveSha256: digest, signature, keyId }))
          if (!inserted) {
            // A concurrent publish of the same bytes won: answer its package.
            return Option.getOrThrow(yield* existing(userId, digest))
          }
          const row = yield* repo.get(userId, id, "available")
          return { pkg: toRecord(Option.getOrThrow(row)), created: true }
        })
    })
  }))
}
