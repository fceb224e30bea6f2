/**
 * Publishing and reading personal mini-app packages (spec "Mini-app packages":
 * list, keys, get, archive, publish; decisions.md: the publish body is the
 * archive itself, signatures and keys). Review, export, offer, report, block,
 * disable and remove are the group "miniAppReview" (MiniAppReview.ts).
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { closedStruct, Timestamp } from "../domain/Common.ts"
import { MiniAppManifest, MiniAppPackage, PackagePath } from "../domain/MiniApps.ts"
import { Forbidden, LimitReached, NotFound, PayloadTooLarge } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { PackageId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

/** decisions.md: the publish body may be 12 MiB (every other route 1 MiB). */
export const MINI_APP_MAX_ARCHIVE_BYTES = 12 * 1024 * 1024
/** Spec Limits: the decoded files of one package hold at most 8 MiB together. */
export const MINI_APP_MAX_FILES_BYTES = 8 * 1024 * 1024
/** Packages one person keeps (removed ones included: packages are immutable rows). */
export const MINI_APP_MAX_PACKAGES = 200

/**
 * Strict (padded) base64 of a file's bytes. Checked by length and one flat character class: a
 * grouped pattern (`(?:….{4})*`) overflows the regex engine's stack on a file of a few MiB.
 */
const Base64 = Schema.String.check(
  Schema.makeFilter((s: string) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/u.test(s), {
    expected: "padded base64",
    toJsonSchema: () => ({ contentEncoding: "base64" })
  })
)

/** One file of an archive: its manifest path and its bytes. */
export const MiniAppArchiveFile = closedStruct({ path: PackagePath, contentBase64: Base64 }).annotate({
  identifier: "MiniAppArchiveFile"
})

/** The body of POST /mini-apps/publish: the archive itself, stored byte for byte. */
export const MiniAppArchive = closedStruct({
  manifest: MiniAppManifest,
  files: Schema.Array(MiniAppArchiveFile).check(Schema.isBetweenLength(1, 256))
}).annotate({
  identifier: "MiniAppArchive",
  description: "A UTF-8 JSON document `{manifest, files: [{path, contentBase64}]}`; no extra fields at any level."
})
export type MiniAppArchive = typeof MiniAppArchive.Type

/** A package signing key (decisions.md). */
export class MiniAppSigningKey extends Schema.Class<MiniAppSigningKey>("MiniAppSigningKey")({
  keyId: Schema.String,
  algorithm: Schema.Literal("Ed25519"),
  /** base64url of the raw 32-byte Ed25519 public key (the JWK `x`). */
  publicKey: Schema.String,
  createdAt: Timestamp,
  retiredAt: Schema.NullOr(Timestamp)
}) {}

export class MiniAppSigningKeyList extends Schema.Class<MiniAppSigningKeyList>("MiniAppSigningKeyList")({
  keys: Schema.Array(MiniAppSigningKey)
}) {}

export class MiniAppPackageList extends Schema.Class<MiniAppPackageList>("MiniAppPackageList")({
  items: Schema.Array(MiniAppPackage)
}) {}

/** The archive's exact bytes (the client reads them as bytes: re-encoding would break the digest). */
export const MiniAppArchiveBytes = Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/json" }))
  .annotate({
    identifier: "MiniAppArchiveBytes",
    description: "The published archive, byte for byte (`application/json`)."
  })

const signatureRule = "`signature` is the base64url Ed25519 signature of `{packageId}.{archiveSha256}.{archiveBytes}` " +
  "(UTF-8) under a key listed by GET /mini-apps/keys (`keyId` is not part of the package: try the listed keys)."

export class MiniAppsGroup extends HttpApiGroup.make("miniApps")
  .add(
    HttpApiEndpoint.get("list", "/mini-apps", { success: MiniAppPackageList }).pipe(agentOperation({
      summary: "List installable mini-app packages",
      description: "The account's own installable packages (`reviewState` `personal-only`), newest first. Blocked, " +
        "disabled and removed packages are not installable and not listed (GET /mini-apps/{packageId} still reads a " +
        "blocked or disabled one).",
      scopes: ["apps:read"]
    })),
    HttpApiEndpoint.get("keys", "/mini-apps/keys", { success: MiniAppSigningKeyList }).pipe(agentOperation({
      summary: "List package signing keys",
      description: "Every Ed25519 key the service has signed packages with, newest first: the current one " +
        "(`retiredAt` null) and retired ones, which still verify the packages they signed. `publicKey` is the " +
        "base64url raw 32-byte key (a JWK `{kty: \"OKP\", crv: \"Ed25519\", x: publicKey}`). The first key is made on " +
        "first need; an operator rotates with `herald admin keys rotate`. " + signatureRule,
      scopes: ["apps:read"]
    })),
    HttpApiEndpoint.get("get", "/mini-apps/:packageId", {
      params: { packageId: PackageId },
      success: MiniAppPackage,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Get a mini-app package",
      description: "One of the account's packages that is not removed (any `reviewState` but `removed`). Another " +
        "account's package, or a removed one, answers 404.",
      scopes: ["apps:read"]
    })),
    HttpApiEndpoint.get("archive", "/mini-apps/:packageId/archive", {
      params: { packageId: PackageId },
      success: MiniAppArchiveBytes,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Download a package's archive",
      description: "The exact bytes published (`application/json`, the original UTF-8 JSON), with their digest in " +
        "`Repr-Digest: sha-256=:<base64>:` and `X-Archive-Sha256: <hex>`. Verify `archiveSha256`, `archiveBytes` and " +
        "`signature` of the package before installing. Only installable packages (`personal-only`) of the account; " +
        "any other answers 404.",
      scopes: ["apps:read"]
    })),
    HttpApiEndpoint.post("publish", "/mini-apps/publish", {
      payload: MiniAppArchive,
      success: [MiniAppPackage.pipe(HttpApiSchema.status(201)), MiniAppPackage.pipe(HttpApiSchema.status(200))],
      error: [Forbidden, LimitReached, PayloadTooLarge]
    }).pipe(agentOperation({
      summary: "Publish a mini-app package",
      description: "The body is the archive itself: UTF-8 JSON `{manifest, files: [{path, contentBase64}]}`, at most " +
        "12 MiB (413 `PAYLOAD_TOO_LARGE` beyond). The manifest follows every rule of MiniAppManifest; no extra field " +
        "is allowed anywhere (archive, manifest, publisher, files). Each manifest file must be in `files` exactly " +
        "once and no other file may be; each file's decoded size and SHA-256 must equal the manifest's; " +
        "`entryPoint` must be one of the files; the decoded files hold at most 8 MiB together. Every broken rule is " +
        "a 400 `VALIDATION_FAILED` issue naming its field (`body.manifest.files[0].sha256`). `manifest.publisher.id` " +
        "must be the account's user id, else 403 `FORBIDDEN`.\n\n" +
        "The package is personal-only (never approved) and immutable: the request's bytes are stored byte for byte " +
        "and `archiveSha256` is their SHA-256. Publishing the same bytes again answers the existing package with 200 " +
        "(201 when new). " + signatureRule + " `installUrl` is `{HERALD_PUBLIC_URL}/mini-apps/{packageId}/install`, " +
        "the link the phone app opens. An account keeps at most 200 packages (422 `LIMIT_REACHED`).",
      scopes: ["apps:write"]
    }))
  )
  .middleware(AgentAuth)
  // Encode with checks on: the API's `disableChecks` skips closedStruct's key filter (domain/Common.ts), and
  // every manifest field would then be taken for an extra one.
  .annotate(HttpApi.SuccessParseOptions, {})
{}
