/**
 * Sign-in a person can do alone (issue 32): an e-mailed one-time link, and
 * passkeys (WebAuthn) registered from the console. These routes take no
 * session — they make one, in the `herald_session` cookie — so they are
 * limited per client address and, for e-mail, per address mailed.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Person } from "../domain/Identity.ts"
import { CsrfRejected, Unauthorized } from "../errors.ts"
import { oneTimeSecret, personOperation } from "../Operation.ts"
import { SignInToken } from "../oauth/SignIn.ts"

/** How long an e-mailed link works (minutes). */
export const SIGN_IN_LINK_MINUTES = 15
/** Links mailed to one address within `SIGN_IN_EMAIL_WINDOW_MINUTES`, whoever asks. */
export const SIGN_IN_EMAILS_PER_WINDOW = 5
export const SIGN_IN_EMAIL_WINDOW_MINUTES = 15
/** The longest `next` kept: a console path with its query. */
export const SIGN_IN_NEXT_MAX = 2000

/** A path on Herald's own origin to open once signed in (`/inbox`, `/join/…`). */
export const SignInNext = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(SIGN_IN_NEXT_MAX)).annotate({
  identifier: "SignInNext",
  description: "A path on Herald's origin (starting `/`, not `//`) to open once signed in; anything else opens `/`."
})

export const EmailLinkRequest = Schema.Struct({
  email: Schema.String.check(Schema.isMinLength(3), Schema.isMaxLength(254)),
  next: Schema.optionalKey(SignInNext)
}).annotate({ identifier: "EmailLinkRequest" })
export type EmailLinkRequest = typeof EmailLinkRequest.Type

export const EmailLinkSent = Schema.Struct({ sent: Schema.Literal(true) }).annotate({ identifier: "EmailLinkSent" })

export const AuthLinkQuery = Schema.Struct({
  token: Schema.optionalKey(SignInToken),
  next: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "AuthLinkQuery" })

/** A WebAuthn ceremony in progress: the server keeps its challenge, once, for a few minutes. */
export const ChallengeId = Schema.String.check(Schema.isPattern(/^wac_[0-9A-Za-z]{1,64}$/)).annotate({
  identifier: "ChallengeId",
  description: "The ceremony's id (`wac_…`), from the options call; usable once, for 5 minutes."
})

/** base64url text of a WebAuthn binary field, bounded. */
export const Base64Url = (max: number) =>
  Schema.String.check(Schema.isMaxLength(max), Schema.isPattern(/^[A-Za-z0-9_-]*={0,2}$/))

const descriptor = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  transports: Schema.optionalKey(Schema.Array(Schema.String))
})

/** `PublicKeyCredentialRequestOptionsJSON` (WebAuthn L3), for `PublicKeyCredential.parseRequestOptionsFromJSON`. */
export const RequestOptionsJson = Schema.Struct({
  challenge: Schema.String,
  timeout: Schema.optionalKey(Schema.Number),
  rpId: Schema.optionalKey(Schema.String),
  allowCredentials: Schema.optionalKey(Schema.Array(descriptor)),
  userVerification: Schema.optionalKey(Schema.String),
  hints: Schema.optionalKey(Schema.Array(Schema.String)),
  extensions: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ identifier: "PublicKeyCredentialRequestOptionsJSON" })

export const PasskeyRequestOptions = Schema.Struct({
  challengeId: ChallengeId,
  options: RequestOptionsJson
}).annotate({ identifier: "PasskeyRequestOptions" })

/** Fields a browser may add to a credential's JSON in later versions are kept, not refused. */
const open = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.StructWithRest(Schema.Struct(fields), [Schema.Record(Schema.String, Schema.Unknown)])

/** `AuthenticationResponseJSON`: what `navigator.credentials.get()` answered, `toJSON()`ed. */
export const AuthenticationResponseJson = open({
  id: Base64Url(1400),
  rawId: Base64Url(1400),
  type: Schema.Literal("public-key"),
  response: open({
    clientDataJSON: Base64Url(8192),
    authenticatorData: Base64Url(8192),
    signature: Base64Url(2048),
    userHandle: Schema.optionalKey(Schema.NullOr(Base64Url(128)))
  }),
  authenticatorAttachment: Schema.optionalKey(Schema.NullOr(Schema.String)),
  clientExtensionResults: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "AuthenticationResponseJSON" })

export const PasskeySignInRequest = Schema.Struct({
  challengeId: ChallengeId,
  response: AuthenticationResponseJson
}).annotate({ identifier: "PasskeySignInRequest" })

const signInNote = "Takes no session; limited per client address (429 `RATE_LIMITED`). A request that sends an " +
  "`Origin` header other than Herald's public origin answers 403 `CSRF_REJECTED`."

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("emailLink", "/auth/email-link", {
      payload: EmailLinkRequest,
      success: EmailLinkSent.pipe(HttpApiSchema.status(202)),
      error: CsrfRejected
    }).pipe(personOperation({
      summary: "E-mail me a sign-in link",
      description: "Mails a one-time sign-in link (`/api/app/auth/link?token=hll_…`, usable once within " +
        `${SIGN_IN_LINK_MINUTES} minutes) to the person with this e-mail address. Always answers 202 \`{sent: true}\`, ` +
        "whether or not the address has an account (no account enumeration); an address without one gets no mail. " +
        "The mail leaves after the answer. Without SMTP (`HERALD_SMTP_URL` unset) the link is written to the server " +
        "log instead. `next`, a path on Herald's origin, is where the link lands once signed in. At most " +
        `${SIGN_IN_EMAILS_PER_WINDOW} requests per e-mail address per ${SIGN_IN_EMAIL_WINDOW_MINUTES} minutes, ` +
        "across all nodes, whoever asks (429 `RATE_LIMITED` with `Retry-After`). " + signInNote
    })),
    HttpApiEndpoint.get("link", "/auth/link", {
      query: AuthLinkQuery,
      success: HttpApiSchema.Empty(302)
    }).pipe(personOperation({
      summary: "Open an e-mailed sign-in link",
      description: "Spends the link's one-time `hll_…` token: opens a new session (30 days) in the `herald_session` " +
        "cookie (HttpOnly, SameSite=Lax, Path=/; Secure unless Herald's public URL is plain http on a non-loopback " +
        "host) and redirects (302) to `next` when it is a path on Herald's origin, else to `/`. An unknown, used or " +
        "expired link redirects to `/sign-in?error=link` and signs no one in. A browser route: it never answers JSON. " +
        "Responses carry `Referrer-Policy: no-referrer` (the secret is in the URL)."
    }), oneTimeSecret),
    HttpApiEndpoint.post("passkeyOptions", "/auth/passkey/options", {
      success: PasskeyRequestOptions,
      error: CsrfRejected
    }).pipe(personOperation({
      summary: "Start a passkey sign-in",
      description: "Begins a WebAuthn authentication ceremony with a discoverable credential (no user name asked; " +
        "user verification preferred): `options` go to `navigator.credentials.get({publicKey})` (after " +
        "`PublicKeyCredential.parseRequestOptionsFromJSON`), and the answer comes back to `POST " +
        "/api/app/auth/passkey` with `challengeId` within 5 minutes. " + signInNote
    })),
    HttpApiEndpoint.post("passkey", "/auth/passkey", {
      payload: PasskeySignInRequest,
      success: Person,
      error: [Unauthorized, CsrfRejected]
    }).pipe(personOperation({
      summary: "Sign in with a passkey",
      description: "Finishes the ceremony `challengeId` names: verifies the assertion against a passkey registered " +
        "with Herald (its signature, the challenge, the origin and RP id — the hostname of Herald's public URL — and " +
        "its signature counter), then opens a new session (30 days) in the `herald_session` cookie and answers the " +
        "person. A ceremony works once; an unknown, used or expired one, an unknown passkey or a failed check " +
        "answers 401 `UNAUTHORIZED` and signs no one in. " + signInNote,
      secret: true
    }))
  )
{}
