/** Records of mini-app packages: the manifest (with every rule of the spec's table) and the package. */
import { Schema } from "effect"
import { closedStruct, TapUrl, Timestamp } from "./Common.ts"

// Every pattern carries the `u` flag: Effect only copies a RegExp into JSON Schema `pattern` then.

/** An app id: "lowercase letters and digits in hyphen-separated groups", max 64. */
export const MiniAppId = Schema.String.check(
  Schema.isMaxLength(64),
  Schema.isPattern(/^[a-z0-9]+(?:-[a-z0-9]+)*$/u, { expected: "lowercase letters and digits in hyphen-separated groups" })
)

/** A semantic version (major.minor.patch, optional pre-release and build; the semver.org grammar), max 64. */
export const SemanticVersion = Schema.String.check(
  Schema.isMaxLength(64),
  Schema.isPattern(
    /^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/u,
    { expected: "a semantic version such as 1.2.3, 1.2.3-beta.1 or 1.2.3+build.5" }
  )
)

/**
 * A path inside the package: "relative path of slash-separated segments (letters, digits, `_`,
 * `-`, dot-separated parts)", max 240. No leading slash, no empty segment, no `.` or `..`
 * segment and no empty dot-part, so a path cannot leave the package.
 */
export const PackagePath = Schema.String.check(
  Schema.isMaxLength(240),
  Schema.isPattern(/^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*(?:\/[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)*$/u, {
    expected: "a relative path of slash-separated segments of letters, digits, _ and -, with dot-separated parts"
  })
)

/** A SHA-256 digest: 64 lowercase hex characters. */
export const Sha256Hex = Schema.String.check(
  Schema.isPattern(/^[0-9a-f]{64}$/u, { expected: "64 lowercase hex characters" })
)

/** A media type: "type/subtype of lowercase letters, digits, `.`, `+`, `-`", max 100. */
export const MediaType = Schema.String.check(
  Schema.isMaxLength(100),
  Schema.isPattern(/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/u, { expected: "a lowercase media type such as text/html" })
)

/** Manifest `format`. */
export const MiniAppFormat = Schema.Literals(["web", "react-native"])
export type MiniAppFormat = typeof MiniAppFormat.Type

/** The only capability a package may ask for. */
export const MiniAppCapability = Schema.Literals(["local-storage"])
export type MiniAppCapability = typeof MiniAppCapability.Type

/** Manifest `ageRating`. */
export const AgeRating = Schema.Literals([4, 9, 13, 16, 18])
export type AgeRating = typeof AgeRating.Type

/** The manifest's `publisher`; no extra fields. It "must equal the authenticated account". */
export class MiniAppPublisher extends Schema.Class<MiniAppPublisher>("MiniAppPublisher")(closedStruct({
  id: Schema.String.check(Schema.isBetweenCodePoints(1, 128)),
  name: Schema.String.check(Schema.isBetweenCodePoints(1, 100))
})) {}

/** One file of the manifest; the archive must hold it with exactly this size and digest. */
export class MiniAppFile extends Schema.Class<MiniAppFile>("MiniAppFile")({
  path: PackagePath,
  size: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4_194_304 })),
  sha256: Sha256Hex,
  mediaType: MediaType
}) {}

/** MiniAppManifest: what a personal mini-app package declares; no extra fields allowed. */
export class MiniAppManifest extends Schema.Class<MiniAppManifest>("MiniAppManifest")(closedStruct({
  schemaVersion: Schema.Literal(1),
  appId: MiniAppId,
  name: Schema.String.check(Schema.isBetweenCodePoints(1, 100)),
  version: SemanticVersion,
  publisher: MiniAppPublisher,
  format: MiniAppFormat,
  runtime: Schema.String.check(Schema.isBetweenCodePoints(1, 64)),
  entryPoint: PackagePath,
  files: Schema.Array(MiniAppFile).check(Schema.isBetweenLength(1, 256)),
  capabilities: Schema.Array(MiniAppCapability).check(Schema.isMaxLength(1)),
  ageRating: AgeRating,
  commerce: Schema.Literal("none"),
  aliases: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isBetweenCodePoints(1, 100))).check(Schema.isMaxLength(8))),
  // Links a person taps: the rule of every other link field (no `javascript:`, `data:`, …).
  privacyUrl: Schema.optionalKey(TapUrl),
  supportUrl: Schema.optionalKey(TapUrl)
})) {}

/** Package review state: publication is `personal-only`, never approved. */
export const MiniAppReviewState = Schema.Literals(["personal-only", "blocked", "disabled", "removed"])
export type MiniAppReviewState = typeof MiniAppReviewState.Type

/** MiniAppPackage: an immutable published package; id `pkg_…`. */
export class MiniAppPackage extends Schema.Class<MiniAppPackage>("MiniAppPackage")({
  packageId: Schema.String,
  manifest: MiniAppManifest,
  archiveBytes: Schema.Natural,
  /** SHA-256 of the archive's exact bytes. */
  archiveSha256: Sha256Hex,
  signature: Schema.String,
  createdAt: Timestamp,
  installUrl: Schema.String,
  reviewState: MiniAppReviewState,
  universalUrl: Schema.optionalKey(Schema.String)
}) {}
