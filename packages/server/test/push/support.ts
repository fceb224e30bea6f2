/**
 * Test support for the push gateway: a throw-away certificate authority, a
 * database (PGlite served on a loopback port, or a fresh database on
 * `TEST_DATABASE_URL`), and fakes that speak APNs (HTTP/2, JWT ES256) and the
 * FCM v1 API with Google's OAuth token endpoint.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { generateKeyPairSync, randomBytes, randomUUID, verify } from "node:crypto"
import type { KeyObject } from "node:crypto"
import * as fs from "node:fs"
import * as http2 from "node:http2"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as tls from "node:tls"
import { MigrationsLayer } from "../../src/db/Migrations.ts"
import { TestSqlLayer } from "../../../../test/support/database.ts"

// ---------------------------------------------------------------------------
// Certificates

export interface TestCertificates {
  /** The CA certificate (PEM) the client side trusts. */
  readonly ca: string
  /** The server's certificate (PEM), signed by the CA, and its key. */
  readonly cert: string
  readonly key: string
}

/** A CA and a server certificate for the given addresses and names, made with the `openssl` CLI. */
export const makeTestCertificates = (subjectAltNames: { readonly ips?: ReadonlyArray<string>; readonly dns?: ReadonlyArray<string> }): TestCertificates => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-push-ca-"))
  try {
    const openssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Herald Push Test CA",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=herald-push-fake")
    const sans = [...(subjectAltNames.ips ?? []).map((ip) => `IP:${ip}`), ...(subjectAltNames.dns ?? []).map((d) => `DNS:${d}`)]
    fs.writeFileSync(path.join(dir, "server.ext"), `subjectAltName=${sans.join(",")}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`)
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
      "-days", "2", "-extfile", "server.ext")
    const read = (name: string) => fs.readFileSync(path.join(dir, name), "utf8")
    return { ca: read("ca.pem"), cert: read("server.pem"), key: read("server.key") }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Makes this process's TLS clients trust the test CA besides the usual roots (Node 24). */
export const trustTestCa = (ca: string) => tls.setDefaultCACertificates([...tls.getCACertificates("default"), ca])

// ---------------------------------------------------------------------------
// Keys and JWTs

/** An APNs token-signing key as Apple hands it out: EC P-256, PKCS#8 PEM (.p8). */
export const makeApnsKey = () => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
  return { pem: privateKey.export({ type: "pkcs8", format: "pem" }) as string, publicKey }
}

/** A Google service-account key file's contents, with a fresh RSA key. */
export const makeServiceAccount = (projectId: string) => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const json = {
    type: "service_account",
    project_id: projectId,
    private_key_id: randomBytes(20).toString("hex"),
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    client_email: `herald-push@${projectId}.iam.gserviceaccount.com`,
    client_id: "104242424242424242424",
    auth_uri: "https://accounts.google.com/o/oauth2/auth",
    token_uri: "https://oauth2.googleapis.com/token"
  }
  return { json, publicKey }
}

export interface DecodedJwt {
  readonly header: Record<string, unknown>
  readonly claims: Record<string, unknown>
  /** Whether the signature verifies with the key given to `decodeJwt`. */
  readonly valid: boolean
}

/** Decodes a compact JWS and checks its ES256 (raw r‖s) or RS256 signature. */
export const decodeJwt = (token: string, publicKey: KeyObject): DecodedJwt => {
  const [h = "", c = "", s = ""] = token.split(".")
  const json = (part: string) => {
    try {
      return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>
    } catch {
      return {}
    }
  }
  const header = json(h)
  const signed = Buffer.from(`${h}.${c}`)
  const signature = Buffer.from(s, "base64url")
  const valid = header.alg === "ES256"
    ? verify("sha256", signed, { key: publicKey, dsaEncoding: "ieee-p1363" }, signature)
    : header.alg === "RS256"
    ? verify("RSA-SHA256", signed, publicKey, signature)
    : false
  return { header, claims: json(c), valid }
}

// ---------------------------------------------------------------------------
// Database

/**
 * The test database: the shared per-file database of the test suite (a fresh
 * database on `TEST_DATABASE_URL`, else embedded PGlite), migrated with the
 * real migrations, so the gateway runs against the production schema.
 */
export const TestDatabase = MigrationsLayer.pipe(Layer.provideMerge(TestSqlLayer))

/** A device row (and its owner, created on first use). */
export const insertDevice = (device: { id: string; platform: "ios" | "android"; token: string; userId?: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const userId = device.userId ?? "usr_test"
    return sql`INSERT INTO users (id, email, name) VALUES (${userId}, ${`${userId}@example.test`}, 'test')
               ON CONFLICT DO NOTHING`.pipe(
      Effect.andThen(sql`INSERT INTO devices (id, user_id, platform, push_token)
                         VALUES (${device.id}, ${userId}, ${device.platform}, ${device.token})`)
    )
  })

export const deviceActive = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ active: boolean }>`SELECT active FROM devices WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows[0]?.active)
  )

export const uniqueId = (prefix: string) => `${prefix}_${randomBytes(6).toString("hex")}`

// ---------------------------------------------------------------------------
// Fake APNs

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly authority: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly httpVersion: string
}

export type FakeAnswer =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: unknown }
  | "hang"

const plainHeaders = (headers: http2.IncomingHttpHeaders | NodeJS.Dict<string | Array<string>>) => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined) continue
    out[name] = Array.isArray(value) ? value.join(", ") : String(value)
  }
  return out
}

/**
 * A fake APNs: HTTP/2 over TLS on `address`:443. It checks what Apple checks
 * first (path, the bearer JWT's ES256 signature, iss and kid, topic, push type)
 * and then answers by device token from `answers` (default: 200 with a fresh
 * `apns-id`). Every request is recorded.
 */
export class FakeApns extends Context.Service<FakeApns, {
  readonly requests: Array<RecordedRequest>
  readonly answers: Map<string, FakeAnswer>
  readonly forToken: (token: string) => ReadonlyArray<RecordedRequest>
}>()("test/FakeApns") {
  static readonly layer = (options: {
    /** Every address gets its own HTTP/2 server on port 443; requests are recorded together. */
    readonly addresses: ReadonlyArray<string>
    readonly certificates: TestCertificates
    readonly publicKey: KeyObject
    readonly teamId: string
    readonly keyId: string
    readonly topic: string
  }) =>
    Layer.effect(FakeApns, Effect.gen(function*() {
      const requests: Array<RecordedRequest> = []
      const answers = new Map<string, FakeAnswer>()
      const hanging = new Set<http2.ServerHttp2Stream>()
      const onStream = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("error", () => {})
        stream.on("end", () => {
          const request: RecordedRequest = {
            method: String(headers[":method"]),
            path: String(headers[":path"]),
            authority: String(headers[":authority"]),
            headers: plainHeaders(headers),
            body: Buffer.concat(chunks).toString("utf8"),
            httpVersion: "2"
          }
          requests.push(request)
          const reply = (status: number, body?: unknown, extra?: Record<string, string>) => {
            const apnsId = request.headers["apns-id"] ?? randomUUID().toUpperCase()
            stream.respond({ ":status": status, "apns-id": apnsId, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...extra })
            stream.end(body !== undefined ? JSON.stringify(body) : undefined)
          }
          const match = /^\/3\/device\/([^/?]+)$/.exec(request.path)
          if (request.method !== "POST") return reply(405, { reason: "MethodNotAllowed" })
          if (match === null) return reply(404, { reason: "BadPath" })
          const auth = /^bearer (.+)$/.exec(request.headers.authorization ?? "")
          if (auth === null) return reply(403, { reason: "MissingProviderToken" })
          const jwt = decodeJwt(auth[1]!, options.publicKey)
          if (!jwt.valid || jwt.header.kid !== options.keyId || jwt.claims.iss !== options.teamId) {
            return reply(403, { reason: "InvalidProviderToken" })
          }
          const topic = request.headers["apns-topic"]
          if (topic === undefined) return reply(400, { reason: "MissingTopic" })
          const pushType = request.headers["apns-push-type"]
          const expectedTopic = pushType === "liveactivity" ? `${options.topic}.push-type.liveactivity` : options.topic
          if (topic !== expectedTopic) return reply(400, { reason: "DeviceTokenNotForTopic" })
          if (request.body === "") return reply(400, { reason: "PayloadEmpty" })
          const answer = answers.get(decodeURIComponent(match[1]!))
          if (answer === "hang") return void hanging.add(stream)
          if (answer === undefined) return reply(200)
          reply(answer.status, answer.body, answer.headers)
        })
      }
      yield* Effect.forEach(options.addresses, (address) => {
        const server = http2.createSecureServer({ key: options.certificates.key, cert: options.certificates.cert })
        const sessions = new Set<http2.ServerHttp2Session>()
        server.on("session", (session) => {
          sessions.add(session)
          session.on("close", () => sessions.delete(session))
        })
        server.on("stream", onStream)
        return Effect.acquireRelease(
          Effect.callback<void, Error>((resume) => {
            server.once("error", (error) => resume(Effect.fail(error)))
            server.listen(443, address, () => resume(Effect.void))
          }),
          () =>
            Effect.callback<void>((resume) => {
              for (const stream of hanging) stream.close()
              for (const session of sessions) session.destroy()
              server.close(() => resume(Effect.void))
            })
        )
      }, { discard: true })
      return {
        requests,
        answers,
        forToken: (token) => requests.filter((r) => r.path === `/3/device/${encodeURIComponent(token)}`)
      }
    }))
}

// ---------------------------------------------------------------------------
// Fake FCM (+ Google's OAuth token endpoint)

export interface TokenExchange {
  readonly host: string
  readonly grantType: string | null
  readonly assertion: DecodedJwt
  readonly accessToken: string | undefined
}

/**
 * A fake of Google's hosts as Herald uses them: `POST /token` (the OAuth
 * JWT-bearer grant, checked against the service account's public key) and
 * `POST /v1/projects/{project}/messages:send` (only with an access token it
 * issued), over HTTPS on `address` at a free port. `messages:send` answers by
 * the message's token from `answers`, by default 200 `{name}`.
 */
export class FakeFcm extends Context.Service<FakeFcm, {
  readonly url: string
  readonly exchanges: Array<TokenExchange>
  readonly sends: Array<RecordedRequest & { readonly json: { message?: Record<string, unknown> } | undefined }>
  readonly answers: Map<string, FakeAnswer>
  readonly sendsForToken: (token: string) => ReadonlyArray<RecordedRequest & { readonly json: { message?: Record<string, unknown> } | undefined }>
}>()("test/FakeFcm") {
  static readonly layer = (options: {
    readonly address: string
    readonly certificates: TestCertificates
    readonly serviceAccount: { readonly client_email: string; readonly token_uri: string }
    readonly publicKey: KeyObject
  }) =>
    Layer.effect(FakeFcm, Effect.gen(function*() {
      const exchanges: Array<TokenExchange> = []
      const sends: Array<RecordedRequest & { json: { message?: Record<string, unknown> } | undefined }> = []
      const answers = new Map<string, FakeAnswer>()
      const issued = new Set<string>()
      let counter = 0
      const server = https.createServer({ key: options.certificates.key, cert: options.certificates.cert }, (req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8")
          const json = (status: number, value: unknown, headers?: Record<string, string>) => {
            res.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers })
            res.end(JSON.stringify(value))
          }
          const url = req.url ?? "/"
          if (req.method === "POST" && url === "/token") {
            const form = new URLSearchParams(body)
            const assertion = decodeJwt(form.get("assertion") ?? "", options.publicKey)
            const now = Math.floor(Date.now() / 1000)
            const ok = form.get("grant_type") === "urn:ietf:params:oauth:grant-type:jwt-bearer" && assertion.valid &&
              assertion.claims.iss === options.serviceAccount.client_email &&
              assertion.claims.aud === options.serviceAccount.token_uri &&
              String(assertion.claims.scope ?? "").split(" ").includes("https://www.googleapis.com/auth/firebase.messaging") &&
              typeof assertion.claims.exp === "number" && assertion.claims.exp > now
            const accessToken = ok ? `ya29.fake-${randomBytes(12).toString("hex")}` : undefined
            exchanges.push({ host: req.headers.host ?? "", grantType: form.get("grant_type"), assertion, accessToken })
            if (accessToken === undefined) return json(400, { error: "invalid_grant", error_description: "Invalid JWT Signature." })
            issued.add(accessToken)
            return json(200, { access_token: accessToken, expires_in: 3599, token_type: "Bearer" })
          }
          const send = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(url)
          if (req.method === "POST" && send !== null) {
            let parsed: { message?: Record<string, unknown> } | undefined
            try {
              parsed = JSON.parse(body)
            } catch {
              parsed = undefined
            }
            const recorded = {
              method: req.method,
              path: url,
              authority: req.headers.host ?? "",
              headers: plainHeaders(req.headers),
              body,
              httpVersion: req.httpVersion,
              json: parsed
            }
            sends.push(recorded)
            const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")
            if (bearer === null || !issued.has(bearer[1]!)) {
              return json(401, {
                error: { code: 401, message: "Request had invalid authentication credentials.", status: "UNAUTHENTICATED" }
              })
            }
            const token = parsed?.message?.token
            const answer = typeof token === "string" ? answers.get(token) : undefined
            if (answer === "hang") return
            if (answer === undefined) {
              counter += 1
              return json(200, { name: `projects/${send[1]}/messages/${counter}` })
            }
            return json(answer.status, answer.body, answer.headers)
          }
          json(404, { error: { code: 404, message: "Not found", status: "NOT_FOUND" } })
        })
      })
      const port = yield* Effect.acquireRelease(
        Effect.callback<number, Error>((resume) => {
          server.once("error", (error) => resume(Effect.fail(error)))
          server.listen(0, options.address, () => resume(Effect.succeed((server.address() as AddressInfo).port)))
        }),
        () =>
          Effect.callback<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
      )
      return {
        url: `https://${options.address}:${port}`,
        exchanges,
        sends,
        answers,
        sendsForToken: (token) => sends.filter((s) => s.json?.message?.token === token)
      }
    }))
}

/** FCM v1's error body: `{error: {code, message, status, details: [FcmError]}}`. */
export const fcmError = (code: number, status: string, errorCode: string, message: string, extraDetails: ReadonlyArray<unknown> = []) => ({
  error: {
    code,
    message,
    status,
    details: [
      { "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode },
      ...extraDetails
    ]
  }
})
