/**
 * The protocol fakes of the push fan-out bench (fanout.ts), one per process (forked with an IPC channel):
 * `apns`, HTTP/2 over TLS on port 443 (apns2 knows no other port), and `fcm`, Google's OAuth token endpoint
 * and FCM v1 `messages:send` over HTTPS. Both answer 200 at once: a slow fake would measure itself, not the
 * senders. Each counts every push it receives by device token and the push's `ref` (the notification it
 * carries), so the bench can tell a push lost from one sent twice.
 *
 * IPC: the parent sends a `FakeOptions`, the fake answers `{port}` once listening; then `"reset"` (answers
 * `"reset"`) and `"report"` (answers a `FakeReport`).
 */
import { createPublicKey, randomBytes, randomUUID, verify } from "node:crypto"
import * as http2 from "node:http2"
import * as https from "node:https"
import type { AddressInfo } from "node:net"

export interface FakeOptions {
  readonly role: "apns" | "fcm"
  readonly address: string
  readonly port: number
  readonly cert: string
  readonly key: string
  /** The public key of the APNs signing key (ES256) or of the service account (RS256), PEM. */
  readonly publicKey: string
  /** APNs: the team id (`iss`) and key id (`kid`) a provider token must carry, and the topic. */
  readonly teamId?: string
  readonly keyId?: string
  readonly topic?: string
  /** FCM: who may exchange an assertion (`iss`, `aud`), and a token the floor uses as is. */
  readonly clientEmail?: string
  readonly tokenUri?: string
  readonly fixedToken?: string
}

export interface FakeReport {
  /** `Date.now()` of the first and last push counted since the reset (0 when none). */
  readonly first: number
  readonly last: number
  readonly received: number
  /** Pushes refused (a bad token or path): none expected. */
  readonly refused: number
  /** `"<device token> <ref>"` → how many times it arrived. */
  readonly counts: Map<string, number>
}

let counts = new Map<string, number>()
let first = 0
let last = 0
let received = 0
let refused = 0

// Only the ref is read from a body: a regex, not JSON.parse, to keep the fake out of the measurement.
const refPattern = /"ref":"([^"]+)"/
const count = (token: string, body: string) => {
  const now = Date.now()
  if (first === 0) first = now
  last = now
  received += 1
  const key = `${token} ${refPattern.exec(body)?.[1] ?? "?"}`
  counts.set(key, (counts.get(key) ?? 0) + 1)
}

/** A compact JWS signature check (ES256 raw r‖s, or RS256), with the claims it carries. */
const checkJwt = (token: string, publicKey: ReturnType<typeof createPublicKey>) => {
  const [h = "", c = "", s = ""] = token.split(".")
  const header = JSON.parse(Buffer.from(h, "base64url").toString("utf8")) as Record<string, unknown>
  const claims = JSON.parse(Buffer.from(c, "base64url").toString("utf8")) as Record<string, unknown>
  const signed = Buffer.from(`${h}.${c}`)
  const signature = Buffer.from(s, "base64url")
  const valid = header.alg === "ES256"
    ? verify("sha256", signed, { key: publicKey, dsaEncoding: "ieee-p1363" }, signature)
    : header.alg === "RS256" && verify("RSA-SHA256", signed, publicKey, signature)
  return { header, claims, valid }
}

const apns = (o: FakeOptions) => {
  const publicKey = createPublicKey(o.publicKey)
  // apns2 reuses its provider token for 55 minutes: each distinct one is verified once.
  const verified = new Set<string>()
  const server = http2.createSecureServer({ key: o.key, cert: o.cert })
  server.on("stream", (stream, headers) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("error", () => {})
    stream.on("end", () => {
      const reply = (status: number, reason?: string) => {
        if (status !== 200) refused += 1
        stream.respond({ ":status": status, "apns-id": randomUUID(), ...(reason !== undefined ? { "content-type": "application/json" } : {}) })
        stream.end(reason !== undefined ? JSON.stringify({ reason }) : undefined)
      }
      const path = String(headers[":path"])
      if (headers[":method"] !== "POST" || !path.startsWith("/3/device/")) return reply(404, "BadPath")
      const bearer = /^bearer (.+)$/.exec(String(headers.authorization ?? ""))?.[1]
      if (bearer === undefined) return reply(403, "MissingProviderToken")
      if (!verified.has(bearer)) {
        const jwt = checkJwt(bearer, publicKey)
        if (!jwt.valid || jwt.header.kid !== o.keyId || jwt.claims.iss !== o.teamId) return reply(403, "InvalidProviderToken")
        verified.add(bearer)
      }
      if (headers["apns-topic"] !== o.topic) return reply(400, "DeviceTokenNotForTopic")
      count(decodeURIComponent(path.slice("/3/device/".length)), Buffer.concat(chunks).toString("utf8"))
      reply(200)
    })
  })
  return server
}

const fcm = (o: FakeOptions) => {
  const publicKey = createPublicKey(o.publicKey)
  const issued = new Set<string>(o.fixedToken !== undefined ? [o.fixedToken] : [])
  const sendPath = /^\/v1\/projects\/[^/]+\/messages:send$/
  const tokenPattern = /"token":"([^"]+)"/
  let names = 0
  return https.createServer({ key: o.key, cert: o.cert, keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const json = (status: number, value: unknown) => {
        if (status !== 200) refused += 1
        res.writeHead(status, { "content-type": "application/json; charset=UTF-8" })
        res.end(JSON.stringify(value))
      }
      if (req.method === "POST" && req.url === "/token") {
        const form = new URLSearchParams(body)
        const jwt = checkJwt(form.get("assertion") ?? "", publicKey)
        if (!jwt.valid || jwt.claims.iss !== o.clientEmail || jwt.claims.aud !== o.tokenUri) {
          return json(400, { error: "invalid_grant", error_description: "Invalid JWT Signature." })
        }
        const token = `ya29.fake-${randomBytes(12).toString("hex")}`
        issued.add(token)
        return json(200, { access_token: token, expires_in: 3599, token_type: "Bearer" })
      }
      if (req.method !== "POST" || !sendPath.test(req.url ?? "")) return json(404, { error: { code: 404, status: "NOT_FOUND" } })
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      if (bearer === undefined || !issued.has(bearer)) return json(401, { error: { code: 401, status: "UNAUTHENTICATED" } })
      count(tokenPattern.exec(body)?.[1] ?? "?", body)
      names += 1
      json(200, { name: `${req.url!.slice(4, -"/messages:send".length)}/messages/${names}` })
    })
  })
}

process.once("message", (options: FakeOptions) => {
  const server = options.role === "apns" ? apns(options) : fcm(options)
  server.listen(options.port, options.address, () => {
    process.send!({ port: (server.address() as AddressInfo).port })
  })
  process.on("message", (message: string) => {
    if (message === "reset") {
      counts = new Map()
      first = last = received = refused = 0
      process.send!("reset")
    } else if (message === "report") {
      process.send!({ first, last, received, refused, counts } satisfies FakeReport)
    }
  })
})
// The parent gone, so is the fake.
process.on("disconnect", () => process.exit(0))
