/**
 * A signed-in person's passkeys (WebAuthn): registered from the console, so
 * later sign-ins need no e-mail (`POST /api/app/auth/passkey`).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok, Timestamp } from "../domain/Common.ts"
import { BadRequest, Conflict, LimitReached, NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"
import { Base64Url, ChallengeId } from "./Auth.ts"

/** Passkeys one person may register. */
export const PASSKEYS_MAX = 20

export const PasskeyId = Schema.String.check(Schema.isPattern(/^pky_[0-9A-Za-z]{1,64}$/)).annotate({
  identifier: "PasskeyId",
  description: "An id starting `pky_`."
})

export class Passkey extends Schema.Class<Passkey>("Passkey")({
  id: Schema.String,
  name: Schema.String,
  createdAt: Timestamp,
  lastUsedAt: Schema.NullOr(Timestamp)
}) {}

export class PasskeyList extends Schema.Class<PasskeyList>("PasskeyList")({
  items: Schema.Array(Passkey)
}) {}

const descriptor = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  transports: Schema.optionalKey(Schema.Array(Schema.String))
})

/** `PublicKeyCredentialCreationOptionsJSON` (WebAuthn L3), for `PublicKeyCredential.parseCreationOptionsFromJSON`. */
export const CreationOptionsJson = Schema.Struct({
  rp: Schema.Struct({ id: Schema.optionalKey(Schema.String), name: Schema.String }),
  user: Schema.Struct({ id: Schema.String, name: Schema.String, displayName: Schema.String }),
  challenge: Schema.String,
  pubKeyCredParams: Schema.Array(Schema.Struct({ type: Schema.String, alg: Schema.Number })),
  timeout: Schema.optionalKey(Schema.Number),
  excludeCredentials: Schema.optionalKey(Schema.Array(descriptor)),
  authenticatorSelection: Schema.optionalKey(Schema.Struct({
    authenticatorAttachment: Schema.optionalKey(Schema.String),
    requireResidentKey: Schema.optionalKey(Schema.Boolean),
    residentKey: Schema.optionalKey(Schema.String),
    userVerification: Schema.optionalKey(Schema.String)
  })),
  hints: Schema.optionalKey(Schema.Array(Schema.String)),
  attestation: Schema.optionalKey(Schema.String),
  attestationFormats: Schema.optionalKey(Schema.Array(Schema.String)),
  extensions: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ identifier: "PublicKeyCredentialCreationOptionsJSON" })

export const PasskeyCreationOptions = Schema.Struct({
  challengeId: ChallengeId,
  options: CreationOptionsJson
}).annotate({ identifier: "PasskeyCreationOptions" })

/** Fields a browser may add to a credential's JSON in later versions are kept, not refused. */
const open = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.StructWithRest(Schema.Struct(fields), [Schema.Record(Schema.String, Schema.Unknown)])

/** `RegistrationResponseJSON`: what `navigator.credentials.create()` answered, `toJSON()`ed. */
export const RegistrationResponseJson = open({
  id: Base64Url(1400),
  rawId: Base64Url(1400),
  type: Schema.Literal("public-key"),
  response: open({
    clientDataJSON: Base64Url(8192),
    attestationObject: Base64Url(65536),
    authenticatorData: Schema.optionalKey(Base64Url(65536)),
    transports: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMaxLength(32))).check(Schema.isMaxLength(10))),
    publicKeyAlgorithm: Schema.optionalKey(Schema.Number),
    publicKey: Schema.optionalKey(Base64Url(8192))
  }),
  authenticatorAttachment: Schema.optionalKey(Schema.NullOr(Schema.String)),
  clientExtensionResults: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "RegistrationResponseJSON" })

export const RegisterPasskeyRequest = Schema.Struct({
  challengeId: ChallengeId,
  response: RegistrationResponseJson,
  name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)))
}).annotate({ identifier: "RegisterPasskeyRequest" })

export class PersonPasskeysGroup extends HttpApiGroup.make("passkeys")
  .add(
    HttpApiEndpoint.post("options", "/passkeys/options", { success: PasskeyCreationOptions }).pipe(personOperation({
      summary: "Start registering a passkey",
      description: "Begins a WebAuthn registration ceremony for the signed-in person: `options` go to " +
        "`navigator.credentials.create({publicKey})` (after `PublicKeyCredential.parseCreationOptionsFromJSON`); " +
        "a discoverable credential is required (sign-in asks no user name), user verification preferred, no " +
        "attestation; the person's passkeys are excluded. Finish with `POST /api/app/passkeys` within 5 minutes."
    })),
    HttpApiEndpoint.post("register", "/passkeys", {
      payload: RegisterPasskeyRequest,
      success: Passkey.pipe(HttpApiSchema.status(201)),
      error: [BadRequest, Conflict, LimitReached]
    }).pipe(personOperation({
      summary: "Register a passkey",
      description: "Finishes the ceremony `challengeId` names (once; it must be this person's): verifies the " +
        "attestation (challenge, origin and RP id — the hostname of Herald's public URL — and the credential's " +
        "public key), then keeps the passkey under `name` (default `Passkey`). A failed check or an unknown, used " +
        "or expired ceremony answers 400 `BAD_REQUEST`; a credential already registered 409 `CONFLICT`; past " +
        `${PASSKEYS_MAX} passkeys 422 \`LIMIT_REACHED\`.`
    })),
    HttpApiEndpoint.get("list", "/passkeys", { success: PasskeyList }).pipe(personOperation({
      summary: "List my passkeys",
      description: "The person's passkeys, newest first: name, when registered and when last used to sign in."
    })),
    HttpApiEndpoint.delete("remove", "/passkeys/:id", { params: { id: PasskeyId }, success: Ok, error: NotFound }).pipe(
      personOperation({
        summary: "Remove a passkey",
        description: "Removes one of the person's passkeys: it signs no one in afterwards. Sessions it opened stay " +
          "(revoke them with `DELETE /api/app/sessions/{id}`)."
      })
    )
  )
  .middleware(PersonAuth)
{}
