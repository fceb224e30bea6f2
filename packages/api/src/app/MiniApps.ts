/**
 * A mini-app package as its install page shows it (the `installUrl`,
 * `/mini-apps/<packageId>/install`): the package, who published it, and
 * whether its signature verifies under one of the service's keys.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { MiniAppPackage } from "../domain/MiniApps.ts"
import { NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { PackageId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** What checking a package's signature found. */
export class MiniAppSignatureCheck extends Schema.Class<MiniAppSignatureCheck>("MiniAppSignatureCheck")({
  algorithm: Schema.Literal("Ed25519"),
  /** The signature verifies over `{packageId}.{archiveSha256}.{archiveBytes}` under one of the listed keys. */
  verified: Schema.Boolean,
  /** The key it verifies under (null when none does). */
  keyId: Schema.NullOr(Schema.String),
  /** That key, base64url of its raw 32 bytes (a JWK `x`); null when none verifies. */
  publicKey: Schema.NullOr(Schema.String),
  /** Whether that key is retired (it still verifies what it signed). */
  keyRetired: Schema.Boolean
}) {}

/** MiniAppInstallView: a package for its install page. */
export class MiniAppInstallView extends Schema.Class<MiniAppInstallView>("MiniAppInstallView")({
  package: MiniAppPackage,
  signature: MiniAppSignatureCheck,
  /** The package may be installed: `reviewState` is `personal-only` and its signature verifies. */
  installable: Schema.Boolean
}) {}

export class PersonMiniAppsGroup extends HttpApiGroup.make("miniApps")
  .add(
    HttpApiEndpoint.get("get", "/mini-apps/:packageId", {
      params: { packageId: PackageId },
      success: MiniAppInstallView,
      error: NotFound
    }).pipe(personOperation({
      summary: "A mini-app package, for installing",
      description: "One of the person's own packages that is not removed, with its manifest (name, version, " +
        "`publisher`, files, capabilities), its archive digest and signature, and the check of that signature " +
        "against the service's signing keys (current and retired), done here as a phone would. `installable` is " +
        "true for a `personal-only` package whose signature verifies. Another person's package, or a removed one, " +
        "answers 404."
    }))
  )
  .middleware(PersonAuth)
  // Encode with checks on, as the Agent API's package reads do: the manifest is a closed struct (domain/Common.ts).
  .annotate(HttpApi.SuccessParseOptions, {})
{}
