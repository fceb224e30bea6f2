/**
 * Passkeys (WebAuthn, issue 32) through `@simplewebauthn/server`: a signed-in
 * person registers one from the console; later anyone signs in with it
 * without a user name (a discoverable credential: the authenticator names the
 * person). The relying party is Herald's public URL: RP id its host name,
 * origin its origin. Each ceremony's challenge is stored (SignInRepo.ts) so
 * any node can finish what another began, and spent by the first answer.
 * User verification is preferred, not required: a security key without a PIN
 * still works, as a second factor would with a password Herald does not have.
 */
import {
  BadRequest,
  Conflict,
  LimitReached,
  NotFound,
  Passkey,
  PASSKEYS_MAX,
  PasskeyList,
  Unauthorized
} from "@herald/api"
import type { PasskeyCreationOptions, PasskeyRequestOptions, Person } from "@herald/api"
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server"
import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { Identity } from "../identity/Identity.ts"
import { isUniqueViolation } from "../identity/IdentityRepo.ts"
import { makeId } from "../lib/Ids.ts"
import { BrowserSessions } from "./BrowserSessions.ts"
import type { Opened } from "./BrowserSessions.ts"
import { PasskeysRepo } from "./PasskeysRepo.ts"
import { SignInRepo } from "./SignInRepo.ts"

type WebAuthn = typeof import("@simplewebauthn/server")
let library: Promise<WebAuthn> | undefined
/**
 * The library's function `name`, the library loaded at the first ceremony: with its ASN.1 and
 * X.509 parsers it is about 250 modules, a fifth of a start's module loading, for a page few open.
 */
const lazily = <K extends "generateAuthenticationOptions" | "generateRegistrationOptions" | "verifyAuthenticationResponse" | "verifyRegistrationResponse">(
  name: K
): WebAuthn[K] =>
  ((...args: ReadonlyArray<unknown>) =>
    (library ??= import("@simplewebauthn/server")).then((lib) => (lib[name] as (...a: ReadonlyArray<unknown>) => unknown)(...args))) as WebAuthn[K]
const generateAuthenticationOptions = lazily("generateAuthenticationOptions")
const generateRegistrationOptions = lazily("generateRegistrationOptions")
const verifyAuthenticationResponse = lazily("verifyAuthenticationResponse")
const verifyRegistrationResponse = lazily("verifyRegistrationResponse")

/** How long a ceremony may take, from the options to the answer. */
export const CEREMONY_SECONDS = 5 * 60

/** ES256, EdDSA, RS256: what platform authenticators and security keys make. */
const ALGORITHMS = [-7, -8, -257]

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url")

/**
 * The library's options as the JSON the contract describes: the WebAuthn
 * dictionary, without the keys it leaves `undefined` (an absent key, not a
 * present one, is what the schema and a browser expect).
 */
const asJson = <A>(options: object): A => JSON.parse(JSON.stringify(options)) as A

/** A caller-made value the library failed on: its message, never a 500. */
const attempt = <A>(f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => cause instanceof Error ? cause.message : String(cause) })

export interface SignedIn {
  readonly person: Person
  readonly session: Opened
}

export class Passkeys extends Context.Service<Passkeys, {
  readonly registrationOptions: (userId: string) => Effect.Effect<typeof PasskeyCreationOptions.Type>
  readonly register: (
    userId: string,
    input: { readonly challengeId: string; readonly response: RegistrationResponseJSON; readonly name?: string | undefined }
  ) => Effect.Effect<Passkey, BadRequest | Conflict | LimitReached>
  readonly list: (userId: string) => Effect.Effect<PasskeyList>
  readonly remove: (userId: string, id: string) => Effect.Effect<void, NotFound>
  readonly authenticationOptions: Effect.Effect<typeof PasskeyRequestOptions.Type>
  /** Verifies an assertion and opens a browser session for its person. */
  readonly authenticate: (
    input: { readonly challengeId: string; readonly response: AuthenticationResponseJSON },
    userAgent: string | null
  ) => Effect.Effect<SignedIn, Unauthorized>
  readonly rpId: string
  readonly origin: string
}>()("herald/Passkeys") {
  static readonly layerNoDeps = Layer.effect(Passkeys, Effect.gen(function*() {
    const repo = yield* PasskeysRepo
    const signInRepo = yield* SignInRepo
    const identity = yield* Identity
    const sessions = yield* BrowserSessions
    const url = new URL((yield* AppConfig).publicUrl)
    const rpId = url.hostname
    const origin = url.origin

    const registrationOptions = Effect.fn("Passkeys.registrationOptions")(function*(userId: string) {
      const person = yield* identity.me(userId).pipe(Effect.orDie)
      const existing = yield* repo.credentialIds(userId)
      const options = yield* Effect.promise(() =>
        generateRegistrationOptions({
          rpName: "Herald",
          rpID: rpId,
          userName: person.email,
          userDisplayName: person.name,
          // The user handle: the person's id, opaque (no e-mail in the authenticator's handle).
          userID: new TextEncoder().encode(person.id),
          attestationType: "none",
          excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: [...c.transports] })),
          authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
          supportedAlgorithmIDs: ALGORITHMS,
          timeout: CEREMONY_SECONDS * 1000
        })
      )
      const challengeId = yield* makeId("wac")
      yield* signInRepo.insertChallenge({ id: challengeId, purpose: "register", challenge: options.challenge, userId, ttlSeconds: CEREMONY_SECONDS })
      return { challengeId, options: asJson<typeof PasskeyCreationOptions.Type["options"]>(options) }
    })

    const register = Effect.fn("Passkeys.register")(function*(
      userId: string,
      input: { readonly challengeId: string; readonly response: RegistrationResponseJSON; readonly name?: string | undefined }
    ) {
      const spent = yield* signInRepo.spendChallenge(input.challengeId, "register")
      if (Option.isNone(spent) || spent.value.userId !== userId) {
        return yield* new BadRequest({ error: "Unknown, used or expired registration: start again with POST /api/app/passkeys/options." })
      }
      const verified = yield* attempt(() =>
        verifyRegistrationResponse({
          response: input.response,
          expectedChallenge: spent.value.challenge,
          expectedOrigin: origin,
          expectedRPID: rpId,
          requireUserVerification: false,
          supportedAlgorithmIDs: ALGORITHMS
        })
      ).pipe(Effect.mapError((message) => new BadRequest({ error: `The passkey could not be verified: ${message}` })))
      if (!verified.verified) return yield* new BadRequest({ error: "The passkey could not be verified." })
      const { credential } = verified.registrationInfo
      const inserted = yield* repo.insert({
        id: yield* makeId("pky"),
        userId,
        credentialId: credential.id,
        publicKey: b64url(credential.publicKey),
        counter: credential.counter,
        transports: (input.response.response.transports ?? []).slice(0, 10),
        name: input.name ?? "Passkey"
      }, PASSKEYS_MAX).pipe(
        Effect.catchTag("SqlError", (e) =>
          isUniqueViolation(e) ? Effect.fail(new Conflict({ error: "This passkey is already registered." })) : Effect.die(e))
      )
      if (Option.isNone(inserted)) {
        return yield* new LimitReached({ error: `A person may register at most ${PASSKEYS_MAX} passkeys.`, limit: PASSKEYS_MAX })
      }
      return inserted.value
    })

    const remove = Effect.fn("Passkeys.remove")(function*(userId: string, id: string) {
      if (!(yield* repo.remove(userId, id))) return yield* new NotFound({ error: "Passkey not found." })
    })

    const authenticationOptions = Effect.gen(function*() {
      const options = yield* Effect.promise(() =>
        generateAuthenticationOptions({ rpID: rpId, userVerification: "preferred", timeout: CEREMONY_SECONDS * 1000 })
      )
      const challengeId = yield* makeId("wac")
      yield* signInRepo.insertChallenge({ id: challengeId, purpose: "authenticate", challenge: options.challenge, userId: null, ttlSeconds: CEREMONY_SECONDS })
      return { challengeId, options: asJson<typeof PasskeyRequestOptions.Type["options"]>(options) }
    }).pipe(Effect.withSpan("Passkeys.authenticationOptions"))

    const refused = (error: string) => new Unauthorized({ error })
    const authenticate = Effect.fn("Passkeys.authenticate")(function*(
      input: { readonly challengeId: string; readonly response: AuthenticationResponseJSON },
      userAgent: string | null
    ) {
      // The challenge is spent first, whatever follows: one answer per ceremony.
      const spent = yield* signInRepo.spendChallenge(input.challengeId, "authenticate")
      if (Option.isNone(spent)) return yield* refused("Unknown, used or expired sign-in: start again with POST /api/app/auth/passkey/options.")
      const stored = yield* repo.findByCredentialId(input.response.id)
      if (Option.isNone(stored)) return yield* refused("This passkey is not registered with Herald.")
      const passkey = stored.value
      // A discoverable credential names its person: it must be the passkey's.
      const handle = input.response.response.userHandle
      if (handle !== undefined && handle !== null && Buffer.from(handle, "base64url").toString() !== passkey.userId) {
        return yield* refused("The passkey's user handle does not match its registration.")
      }
      const verified = yield* attempt(() =>
        verifyAuthenticationResponse({
          response: input.response,
          expectedChallenge: spent.value.challenge,
          expectedOrigin: origin,
          expectedRPID: rpId,
          credential: {
            id: passkey.credentialId,
            publicKey: Buffer.from(passkey.publicKey, "base64url"),
            counter: passkey.counter,
            transports: [...passkey.transports]
          },
          requireUserVerification: false
        })
      ).pipe(Effect.mapError((message) => refused(`The passkey was not accepted: ${message}`)))
      if (!verified.verified) return yield* refused("The passkey was not accepted.")
      // A counter that did not move on from the stored one is left as it was (authenticators without one send 0).
      yield* repo.markUsed(passkey.id, passkey.counter, Math.max(passkey.counter, verified.authenticationInfo.newCounter))
      const person = yield* identity.me(passkey.userId).pipe(Effect.mapError(() => refused("This passkey's person no longer exists.")))
      return { person, session: yield* sessions.open(person.id, userAgent) }
    })

    return Passkeys.of({
      registrationOptions,
      register,
      list: (userId) => Effect.map(repo.list(userId), (items) => new PasskeyList({ items })),
      remove,
      authenticationOptions,
      authenticate,
      rpId,
      origin
    })
  }))
}
