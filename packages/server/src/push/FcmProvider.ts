/**
 * FCM through `firebase-admin`: HTTP v1 `POST /v1/projects/{project}/messages:send`
 * with an OAuth access token obtained from the service account (a JWT-bearer
 * grant signed RS256 with its key).
 *
 * Choices made against the library's defaults:
 * - The credential is Herald's own (`serviceAccountCredential`): firebase-admin 14's
 *   `cert(serviceAccount, httpAgent)` drops the agent when it builds its Google
 *   auth client, so the token exchange would bypass `AppOptions.httpAgent`. Ours
 *   sends it through the same agent as the messages, honours the key's
 *   `token_uri`, and asks only for the `firebase.messaging` scope.
 * - firebase-admin retries a 503 itself up to four times, sleeping up to a minute
 *   (its Retry-After); Herald's queue owns retries (backoff, jitter, durable
 *   attempts), so that inner retry is switched off and one call is one request.
 * - `FCM_ENDPOINT` sends every connection (messages and token exchange) to
 *   another host, keeping the request's Host header: for a local fake or a
 *   forwarding proxy.
 */
import { Clock, Duration, Effect, Option, Redacted } from "effect"
import type { Scope } from "effect"
import { deleteApp, initializeApp } from "firebase-admin/app"
import type { Credential, GoogleOAuthAccessToken } from "firebase-admin/app"
import { getMessaging } from "firebase-admin/messaging"
import { randomUUID, sign } from "node:crypto"
import * as https from "node:https"
import * as net from "node:net"
import type { Duplex } from "node:stream"
import * as tls from "node:tls"
import type { FcmConfig, FcmServiceAccount } from "../config/PushConfig.ts"
import { Accepted, parseRetryAfter, Rejected, Retry, toFcmMessage } from "./PushMessage.ts"
import type { Provider, PushMessage, PushOutcome, PushTarget } from "./PushMessage.ts"

export const googleTokenUri = "https://oauth2.googleapis.com/token"
export const fcmScope = "https://www.googleapis.com/auth/firebase.messaging"
export const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/**
 * An https agent whose every connection goes to `endpoint` (host and port)
 * whatever host a request names; TLS is verified against the endpoint's host.
 * An `http:` endpoint is reached over plain TCP (local fakes only).
 */
export const endpointAgent = (endpoint: URL, options?: https.AgentOptions): https.Agent => {
  const host = endpoint.hostname.replace(/^\[(.*)\]$/, "$1")
  const secure = endpoint.protocol === "https:"
  const port = Number(endpoint.port || (secure ? 443 : 80))
  class EndpointAgent extends https.Agent {
    override createConnection(
      connect: https.RequestOptions,
      callback?: (err: Error | null, stream: Duplex) => void
    ): Duplex | null | undefined {
      if (!secure) return net.connect({ host, port })
      const { servername: _, ...rest } = connect as tls.ConnectionOptions
      return super.createConnection(
        { ...rest, host, port, ...(net.isIP(host) === 0 ? { servername: host } : {}) } as https.RequestOptions,
        callback
      )
    }
  }
  return new EndpointAgent({ keepAlive: true, ...options })
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** The signed JWT a service account exchanges for an access token. */
export const tokenAssertion = (account: FcmServiceAccount, nowSeconds: number): string => {
  const header = { alg: "RS256", typ: "JWT", ...(account.private_key_id !== undefined ? { kid: account.private_key_id } : {}) }
  const claims = {
    iss: account.client_email,
    scope: fcmScope,
    aud: account.token_uri ?? googleTokenUri,
    iat: nowSeconds,
    exp: nowSeconds + 3600
  }
  const unsigned = `${base64url(header)}.${base64url(claims)}`
  return `${unsigned}.${sign("RSA-SHA256", Buffer.from(unsigned), account.private_key).toString("base64url")}`
}

/**
 * A firebase-admin credential for a service account whose token exchange goes
 * through `agent` (firebase-admin caches the token until five minutes before it expires).
 */
export const serviceAccountCredential = (
  account: Redacted.Redacted<FcmServiceAccount>,
  agent: https.Agent,
  timeout: Duration.Duration
): Credential => ({
  getAccessToken: () =>
    new Promise<GoogleOAuthAccessToken>((resolve, reject) => {
      const sa = Redacted.value(account)
      const uri = new URL(sa.token_uri ?? googleTokenUri)
      if (uri.protocol !== "https:") return reject(new Error(`token_uri must be https: ${uri.origin}`))
      const body = new URLSearchParams({
        grant_type: jwtBearerGrant,
        assertion: tokenAssertion(sa, Math.floor(Date.now() / 1000))
      }).toString()
      const request = https.request(uri, {
        method: "POST",
        agent,
        timeout: Duration.toMillis(timeout),
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "content-length": Buffer.byteLength(body),
          accept: "application/json"
        }
      }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", reject)
        response.on("end", () => {
          let json: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {}
          try {
            json = JSON.parse(Buffer.concat(chunks).toString("utf8"))
          } catch {
            // reported below
          }
          const status = response.statusCode ?? 0
          if (status >= 200 && status < 300 && typeof json.access_token === "string") {
            return resolve({
              access_token: json.access_token,
              expires_in: typeof json.expires_in === "number" ? json.expires_in : 3600
            })
          }
          const detail = [json.error, json.error_description].filter((s) => typeof s === "string").join(": ")
          reject(new Error(`OAuth token exchange with ${uri.host} failed: HTTP ${status}${detail ? ` ${detail}` : ""}`))
        })
      })
      request.on("timeout", () => request.destroy(new Error(`OAuth token exchange with ${uri.host} timed out`)))
      request.on("error", reject)
      request.end(body)
    })
})

interface FirebaseErrorLike {
  readonly code: string
  readonly message: string
  readonly httpResponse?: { readonly status: number; readonly headers: Record<string, unknown>; readonly data?: unknown }
}

const isFirebaseError = (error: unknown): error is FirebaseErrorLike =>
  typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string" &&
  ((error as { code: string }).code.startsWith("messaging/") || (error as { code: string }).code.startsWith("app/"))

interface GoogleErrorBody {
  readonly status?: string
  readonly details?: ReadonlyArray<{
    readonly "@type"?: string
    readonly errorCode?: string
    readonly fieldViolations?: ReadonlyArray<{ readonly field?: string }>
  }>
}

const errorBody = (data: unknown): GoogleErrorBody | undefined => {
  const parsed = typeof data === "string" ? (() => {
    try {
      return JSON.parse(data) as unknown
    } catch {
      return undefined
    }
  })() : data
  const error = typeof parsed === "object" && parsed !== null ? (parsed as { error?: unknown }).error : undefined
  return typeof error === "object" && error !== null ? error as GoogleErrorBody : undefined
}

/** FCM's own error code (`UNREGISTERED`, `QUOTA_EXCEEDED`, …), else the RPC status. */
const serverCode = (body: GoogleErrorBody | undefined): string | undefined =>
  body?.details?.find((d) => d["@type"] === "type.googleapis.com/google.firebase.fcm.v1.FcmError")?.errorCode ?? body?.status

/** An INVALID_ARGUMENT names the token unless its field violations point only at other fields. */
const blamesToken = (body: GoogleErrorBody | undefined): boolean => {
  const fields = (body?.details ?? [])
    .filter((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest")
    .flatMap((d) => d.fieldViolations ?? [])
    .map((v) => v.field)
    .filter((f): f is string => typeof f === "string")
  return fields.length === 0 || fields.includes("message.token")
}

const retryable = new Set([
  "messaging/message-rate-exceeded",
  "messaging/device-message-rate-exceeded",
  "messaging/topics-message-rate-exceeded",
  "messaging/server-unavailable",
  "messaging/internal-error",
  "messaging/unknown-error",
  "messaging/authentication-error"
])

/** Classifies what `Messaging.send` rejected with into an outcome. */
export const classifyFcmError = (error: unknown, nowMillis: number): PushOutcome => {
  if (!isFirebaseError(error)) {
    const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined
    return Retry(typeof code === "string" ? `ConnectionError ${code}` : "ConnectionError")
  }
  // `app/…`: the credential could not get a token (token endpoint down, key refused).
  if (error.code.startsWith("app/")) return Retry(`CredentialError ${error.code}`)
  const response = error.httpResponse
  const body = errorBody(response?.data)
  const reason = serverCode(body) ?? error.code.replace(/^messaging\//, "")
  const retryAfter = parseRetryAfter(response?.headers["retry-after"] as string | undefined, nowMillis)
  const status = response?.status ?? 0
  if (status === 429 || status >= 500 || retryable.has(error.code)) return Retry(reason, retryAfter)
  // Only the server's word marks a token dead: a message firebase-admin refuses locally is ours to fix.
  if (response !== undefined) {
    switch (error.code) {
      case "messaging/registration-token-not-registered":
      case "messaging/invalid-registration-token":
        return Rejected(reason, { tokenInvalid: true })
      case "messaging/invalid-argument":
        return Rejected(reason, { tokenInvalid: blamesToken(body) })
      case "messaging/mismatched-credential":
        // SENDER_ID_MISMATCH: the token belongs to another Firebase project.
        return Rejected(reason, { tokenInvalid: reason === "SENDER_ID_MISMATCH" })
    }
  }
  return Rejected(reason)
}

export interface FcmProviderOptions {
  /** The agent for every request (messages and token exchange); default from `FCM_ENDPOINT` or a keep-alive agent. */
  readonly httpAgent?: https.Agent
}

/** The FCM provider: one firebase-admin app, deleted with the scope. */
export const makeFcmProvider = (
  config: FcmConfig,
  timeout: Duration.Duration,
  options?: FcmProviderOptions
): Effect.Effect<Provider, never, Scope.Scope> =>
  Effect.gen(function*() {
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() =>
        options?.httpAgent ?? Option.match(config.endpoint, {
          onNone: () => new https.Agent({ keepAlive: true }),
          onSome: (endpoint) => endpointAgent(endpoint)
        })
      ),
      (agent) => Effect.sync(() => agent.destroy())
    )
    const app = yield* Effect.acquireRelease(
      Effect.sync(() =>
        initializeApp({
          credential: serviceAccountCredential(config.serviceAccount, agent, timeout),
          httpAgent: agent,
          projectId: config.projectId
        }, `herald-fcm-${randomUUID()}`)
      ),
      (app) => Effect.tryPromise(() => deleteApp(app)).pipe(Effect.ignore)
    )
    const messaging = getMessaging(app)
    const handler = (messaging as unknown as { messagingRequestHandler?: { httpClient?: { retry?: unknown } } })
      .messagingRequestHandler
    if (handler?.httpClient !== undefined) handler.httpClient.retry = null

    // The provider call keeps its span (built once: no stack trace captured per call).
    const send = Effect.fnUntraced(function*(target: PushTarget, message: PushMessage) {
      const attempt = yield* Effect.tryPromise({
        try: () => messaging.send(toFcmMessage(target, message)),
        catch: (error) => error
      }).pipe(
        Effect.map((name): Attempt => ({ _tag: "Answered", name })),
        Effect.catch((error) => Effect.succeed<Attempt>({ _tag: "Failed", error })),
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.succeed<Attempt>({ _tag: "TimedOut" }) })
      )
      switch (attempt._tag) {
        case "Answered":
          return Accepted(attempt.name)
        case "TimedOut":
          return Retry("Timeout")
        case "Failed":
          return classifyFcmError(attempt.error, yield* Clock.currentTimeMillis)
      }
    }, Effect.withSpan("FcmProvider.send", (target: PushTarget, message: PushMessage) => ({
      attributes: { deviceId: target.deviceId, pushType: message.pushType }
    })))

    return { name: "fcm", description: `project ${config.projectId}`, send } satisfies Provider
  })

type Attempt =
  | { readonly _tag: "Answered"; readonly name: string }
  | { readonly _tag: "Failed"; readonly error: unknown }
  | { readonly _tag: "TimedOut" }
