/**
 * Push provider credentials, read once through `Config`. APNs is in use when
 * its key, key id, team id and topic are all set; FCM when its service account
 * is set; the sandbox provider serves every platform whose provider is not
 * configured. Web Push needs no credentials (its VAPID keys are the service's
 * own, push/WebPushKeys.ts), only an optional contact. A partial configuration is a start-up error that names what is
 * missing. Secrets (the .p8 key, the service account) stay `Redacted` and are
 * never printed, not even in error messages.
 */
import { Config, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { createPrivateKey } from "node:crypto"
import * as fs from "node:fs"
import * as Env from "./Variable.ts"

/** Apple's hosts (HTTP/2 on port 443). */
export const ApnsHosts = {
  production: "api.push.apple.com",
  sandbox: "api.sandbox.push.apple.com"
} as const

export interface ApnsConfig {
  /** The token-signing key: PKCS#8 PEM of the EC P-256 key in Apple's .p8 file. */
  readonly key: Redacted.Redacted<string>
  readonly keyId: string
  readonly teamId: string
  /** The app's bundle id: the `apns-topic` (live activities add `.push-type.liveactivity`). */
  readonly topic: string
  /** Host for production tokens (and for every token when no sandbox host is set). */
  readonly host: string
  /** Host for tokens of the sandbox environment (development builds). */
  readonly sandboxHost: Option.Option<string>
}

/** The fields of a Google service-account JSON key Herald uses. */
export interface FcmServiceAccount {
  readonly project_id?: string
  readonly client_email: string
  readonly private_key: string
  readonly private_key_id?: string
  /** Google's OAuth token endpoint for this key (default https://oauth2.googleapis.com/token). */
  readonly token_uri?: string
}

export interface FcmConfig {
  readonly serviceAccount: Redacted.Redacted<FcmServiceAccount>
  readonly projectId: string
  /**
   * Where FCM requests and the OAuth token exchange are sent instead of Google's hosts
   * (a local fake or a forwarding proxy). TLS is verified against this URL's host.
   */
  readonly endpoint: Option.Option<URL>
}

export interface PushConfigShape {
  readonly apns: Option.Option<ApnsConfig>
  readonly fcm: Option.Option<FcmConfig>
  /**
   * The VAPID `sub` claim (RFC 8292 §2.1): a `mailto:` or `https:` contact for
   * push services. None: the public URL when it is https, else a placeholder.
   */
  readonly webPushSubject: Option.Option<string>
  /** Upper bound of one provider request, connection included. */
  readonly timeout: Duration.Duration
}

/** The push providers' variables; an empty value counts as unset (a common shell idiom). */
export const pushVariables = {
  apnsKey: Env.optionalSecret("APNS_KEY", {
    blankIsUnset: true,
    description:
      "APNs token-signing key: the contents of Apple's `.p8` file (PEM), or a path to it. With `APNS_KEY_ID`, `APNS_TEAM_ID` and `APNS_TOPIC` it enables APNs; unset: iOS devices use the sandbox provider."
  }),
  apnsKeyId: Env.optionalString("APNS_KEY_ID", { blankIsUnset: true, description: "The 10-character id of the APNs key." }),
  apnsTeamId: Env.optionalString("APNS_TEAM_ID", { blankIsUnset: true, description: "The Apple developer team id that owns the key." }),
  apnsTopic: Env.optionalString("APNS_TOPIC", { blankIsUnset: true, description: "The iOS app's bundle id (the `apns-topic`)." }),
  apnsHost: Env.optionalString("APNS_HOST", {
    blankIsUnset: true,
    unset: `\`${ApnsHosts.production}\``,
    description: "APNs host for production device tokens (and for all tokens when `APNS_SANDBOX_HOST` is unset)."
  }),
  apnsSandboxHost: Env.optionalString("APNS_SANDBOX_HOST", {
    blankIsUnset: true,
    description: `APNs host for sandbox-environment tokens (development builds), usually \`${ApnsHosts.sandbox}\`.`
  }),
  fcmServiceAccount: Env.optionalSecret("FCM_SERVICE_ACCOUNT", {
    blankIsUnset: true,
    description:
      "Firebase service-account key: its JSON contents, or a path to the JSON file. Enables FCM; unset: Android devices use the sandbox provider."
  }),
  fcmProjectId: Env.optionalString("FCM_PROJECT_ID", {
    blankIsUnset: true,
    unset: "the service account's `project_id`",
    description: "The Firebase project that sends."
  }),
  fcmEndpoint: Env.optionalString("FCM_ENDPOINT", {
    blankIsUnset: true,
    description:
      "Base URL (`https://host:port`; plain `http://` only on loopback) that receives FCM requests and the OAuth token exchange instead of Google's hosts: a local fake or a forwarding proxy. For tests."
  }),
  timeoutMs: Env.integer("PUSH_TIMEOUT_MS", {
    default: 10_000,
    positive: true,
    description: "Upper bound of one push request to APNs, FCM or a Web Push service, in milliseconds; a timeout is retried later."
  }),
  webPushSubject: Env.optionalString("HERALD_WEBPUSH_SUBJECT", {
    blankIsUnset: true,
    unset: "`HERALD_PUBLIC_URL` when it is https, else `mailto:webpush@localhost`",
    description:
      "The contact Web Push services see in Herald's VAPID signature (`sub`): an email address, a `mailto:` URI or an `https://` URL. Apple's push service refuses a localhost one."
  })
}

/** Every environment variable of the push providers, as declared (the reference lists them). */
export const pushEnvironmentVariables = Env.list(pushVariables)

const configError = Env.configError

const fail = (message: string) => Effect.fail(configError(message))

const raw = Env.configOf(pushVariables)

type Raw = typeof raw extends Config.Config<infer A> ? A : never

/**
 * A secret given inline or as a path: inline when it looks like the contents
 * (`looksInline`), otherwise the file at that path. The value is never echoed.
 */
const inlineOrFile = (name: string, value: Redacted.Redacted<string>, looksInline: (text: string) => boolean) => {
  const text = Redacted.value(value).trim()
  if (looksInline(text)) return Effect.succeed(text)
  return Effect.try({
    try: () => fs.readFileSync(text, "utf8"),
    catch: () => configError(`${name} is neither the key itself nor the path of a readable file`)
  })
}

const resolveApns = (r: Raw): Effect.Effect<Option.Option<ApnsConfig>, Config.ConfigError> => {
  const required = [
    ["APNS_KEY", r.apnsKey],
    ["APNS_KEY_ID", r.apnsKeyId],
    ["APNS_TEAM_ID", r.apnsTeamId],
    ["APNS_TOPIC", r.apnsTopic]
  ] as const
  const present = [...required, ["APNS_HOST", r.apnsHost], ["APNS_SANDBOX_HOST", r.apnsSandboxHost]] as const
  const isSet = (v: Option.Option<unknown>) => Option.isSome(v)
  const set = present.filter(([, v]) => isSet(v)).map(([n]) => n)
  if (set.length === 0) return Effect.succeed(Option.none())
  const missing = required.filter(([, v]) => !isSet(v)).map(([n]) => n)
  if (missing.length > 0) {
    return fail(
      `APNs is partly configured: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set but ${set.join(", ")} ${set.length === 1 ? "is" : "are"}. ` +
        "APNs needs APNS_KEY, APNS_KEY_ID, APNS_TEAM_ID and APNS_TOPIC; unset them all to use the sandbox provider."
    )
  }
  return Effect.gen(function*() {
    const pem = (yield* inlineOrFile("APNS_KEY", Option.getOrThrow(r.apnsKey), (t) => t.includes("-----BEGIN")))
      // Keys pasted into a single-line variable often carry literal "\n".
      .replace(/\\n/g, "\n")
      .trim()
    const key = yield* Effect.try({
      try: () => createPrivateKey(pem),
      catch: () => configError("APNS_KEY is not a PEM private key (expected the contents of Apple's .p8 file)")
    })
    if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
      return yield* fail("APNS_KEY is not an EC P-256 key (expected the contents of Apple's .p8 file)")
    }
    return Option.some<ApnsConfig>({
      key: Redacted.make(pem),
      keyId: Option.getOrThrow(r.apnsKeyId),
      teamId: Option.getOrThrow(r.apnsTeamId),
      topic: Option.getOrThrow(r.apnsTopic),
      host: Option.getOrElse(r.apnsHost, () => ApnsHosts.production),
      sandboxHost: r.apnsSandboxHost
    })
  })
}

/** `HERALD_WEBPUSH_SUBJECT` as a VAPID `sub`: a bare email address becomes a `mailto:` URI. */
const resolveWebPushSubject = (r: Raw): Effect.Effect<Option.Option<string>, Config.ConfigError> => {
  if (Option.isNone(r.webPushSubject)) return Effect.succeed(Option.none())
  const value = r.webPushSubject.value.trim()
  const subject = /^[^\s@:/]+@[^\s@/]+$/.test(value) ? `mailto:${value}` : value
  const valid = URL.canParse(subject) && (() => {
    const url = new URL(subject)
    // web-push warns on every push about an https localhost one (Apple's push service refuses it).
    return (url.protocol === "mailto:" && url.pathname.includes("@")) ||
      (url.protocol === "https:" && url.hostname !== "" && url.hostname !== "localhost")
  })()
  return valid
    ? Effect.succeed(Option.some(subject))
    : fail(`HERALD_WEBPUSH_SUBJECT must be an email address, a mailto: URI or an https:// URL, not ${value}`)
}

const resolveFcm = (r: Raw): Effect.Effect<Option.Option<FcmConfig>, Config.ConfigError> => {
  if (Option.isNone(r.fcmServiceAccount)) {
    const set = ([["FCM_PROJECT_ID", r.fcmProjectId], ["FCM_ENDPOINT", r.fcmEndpoint]] as const)
      .filter(([, v]) => Option.isSome(v)).map(([n]) => n)
    return set.length === 0
      ? Effect.succeed(Option.none())
      : fail(`FCM is partly configured: FCM_SERVICE_ACCOUNT is not set but ${set.join(" and ")} ${set.length === 1 ? "is" : "are"}.`)
  }
  const secret = r.fcmServiceAccount.value
  return Effect.gen(function*() {
    const text = yield* inlineOrFile("FCM_SERVICE_ACCOUNT", secret, (t) => t.startsWith("{"))
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => configError("FCM_SERVICE_ACCOUNT is not valid JSON (expected a Firebase service-account key)")
    })
    const field = (name: string): string | undefined => {
      const value = typeof json === "object" && json !== null ? (json as Record<string, unknown>)[name] : undefined
      return typeof value === "string" && value.trim() !== "" ? value : undefined
    }
    const clientEmail = field("client_email")
    const privateKey = field("private_key")
    if (clientEmail === undefined || privateKey === undefined) {
      return yield* fail("FCM_SERVICE_ACCOUNT lacks client_email or private_key (expected a Firebase service-account key)")
    }
    yield* Effect.try({
      try: () => createPrivateKey(privateKey),
      catch: () => configError("FCM_SERVICE_ACCOUNT has a private_key that is not a PEM private key")
    })
    const projectId = Option.orElse(r.fcmProjectId, () => Option.fromUndefinedOr(field("project_id")))
    if (Option.isNone(projectId)) {
      return yield* fail("FCM_PROJECT_ID is not set and FCM_SERVICE_ACCOUNT has no project_id")
    }
    const endpoint = yield* Option.match(r.fcmEndpoint, {
      onNone: () => Effect.succeed(Option.none<URL>()),
      onSome: (value) =>
        Effect.try({
          try: () => {
            const url = new URL(value)
            const loopback = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(url.hostname)
            if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) throw new Error("protocol")
            return Option.some(url)
          },
          catch: () => configError(`FCM_ENDPOINT must be an https URL (plain http only on loopback): ${value}`)
        })
    })
    const tokenUri = field("token_uri")
    const keyId = field("private_key_id")
    const account: FcmServiceAccount = {
      client_email: clientEmail,
      private_key: privateKey,
      project_id: projectId.value,
      ...(keyId !== undefined ? { private_key_id: keyId } : {}),
      ...(tokenUri !== undefined ? { token_uri: tokenUri } : {})
    }
    return Option.some<FcmConfig>({ serviceAccount: Redacted.make(account), projectId: projectId.value, endpoint })
  })
}

export const pushConfig: Config.Config<PushConfigShape> = raw.pipe(
  Config.mapEffect((r) =>
    Effect.gen(function*() {
      const apns = yield* resolveApns(r)
      const fcm = yield* resolveFcm(r)
      const webPushSubject = yield* resolveWebPushSubject(r)
      return { apns, fcm, webPushSubject, timeout: Duration.millis(r.timeoutMs) }
    })
  )
)

export class PushConfig extends Context.Service<PushConfig, PushConfigShape>()("herald/PushConfig") {
  static readonly layer = Layer.effect(PushConfig, pushConfig)
}
