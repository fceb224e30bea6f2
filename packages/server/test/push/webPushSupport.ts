/**
 * Test support for Web Push: a browser's subscription made here (a real
 * P-256 key pair and auth secret), and a push service on loopback that does
 * what a real one does with each request — checks the VAPID signature
 * (RFC 8292: an ES256 JWT for the endpoint's origin, `k` the key it verifies
 * with) — and then, as the browser would, decrypts the payload (RFC 8291,
 * `aes128gcm`, RFC 8188) with the subscription's private key. The decryption
 * is written here over node:crypto, independent of web-push and of the
 * `http_ece` package it encrypts with.
 */
import { Context, Effect, Layer } from "effect"
import { createECDH, createPublicKey, createDecipheriv, hkdfSync, randomBytes, verify } from "node:crypto"
import type { ECDH } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** A browser's push subscription: what `PushSubscription.toJSON()` gives, and the private half it keeps. */
export interface TestSubscription {
  readonly endpoint: string
  readonly expirationTime: null
  readonly keys: { readonly p256dh: string; readonly auth: string }
  readonly ecdh: ECDH
  readonly authSecret: Buffer
}

export const makeSubscription = (endpoint: string): TestSubscription => {
  const ecdh = createECDH("prime256v1")
  ecdh.generateKeys()
  const authSecret = randomBytes(16)
  return {
    endpoint,
    expirationTime: null,
    keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: authSecret.toString("base64url") },
    ecdh,
    authSecret
  }
}

/** The subscription as the browser sends it to Herald. */
export const subscriptionJson = (s: TestSubscription) => ({ endpoint: s.endpoint, expirationTime: s.expirationTime, keys: s.keys })

const hkdf = (ikm: Buffer, salt: Buffer, info: Buffer, length: number) =>
  Buffer.from(hkdfSync("sha256", ikm, salt, info, length))

/**
 * Decrypts an `aes128gcm` Web Push message body (RFC 8291 §3.4, RFC 8188 §2):
 * header = salt(16) ‖ rs(4) ‖ idlen(1) ‖ keyid (the sender's ephemeral public key);
 * one record, AES-128-GCM, its plaintext ending with the delimiter 0x02 and zero padding.
 */
export const decryptAes128gcm = (body: Buffer, subscription: TestSubscription): string => {
  const salt = body.subarray(0, 16)
  const rs = body.readUInt32BE(16)
  const idlen = body[20]!
  const senderPublic = body.subarray(21, 21 + idlen)
  const record = body.subarray(21 + idlen)
  if (idlen !== 65) throw new Error(`keyid of ${idlen} bytes, expected the sender's 65-byte public key`)
  if (record.length > rs) throw new Error("more than one record")
  const ecdhSecret = subscription.ecdh.computeSecret(senderPublic)
  const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), subscription.ecdh.getPublicKey(), senderPublic])
  const ikm = hkdf(ecdhSecret, subscription.authSecret, keyInfo, 32)
  const cek = hkdf(ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16)
  const nonce = hkdf(ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12)
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce)
  decipher.setAuthTag(record.subarray(record.length - 16))
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()])
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error("the last record does not end with the 0x02 delimiter")
  return padded.subarray(0, end).toString("utf8")
}

/** The claims of a VAPID `Authorization: vapid t=…, k=…` header, verified with `k`; throws when it does not verify. */
export const verifyVapid = (authorization: string | undefined) => {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? "")
  if (match === null) throw new Error(`not a vapid authorization: ${authorization}`)
  const [, jwt, k] = match as unknown as [string, string, string]
  const [header, claims, signature] = jwt.split(".") as [string, string, string]
  const point = Buffer.from(k, "base64url")
  if (point.length !== 65 || point[0] !== 4) throw new Error("k is not an uncompressed P-256 point")
  const key = createPublicKey({
    key: { kty: "EC", crv: "P-256", x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33).toString("base64url") },
    format: "jwk"
  })
  const valid = verify("sha256", Buffer.from(`${header}.${claims}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url"))
  if (!valid) throw new Error("the VAPID signature does not verify")
  const decodedHeader = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { alg?: string }
  if (decodedHeader.alg !== "ES256") throw new Error(`alg ${decodedHeader.alg}`)
  return { k, claims: JSON.parse(Buffer.from(claims, "base64url").toString("utf8")) as { aud: string; exp: number; sub: string } }
}

/** One push as the fake service took it: its headers, VAPID claims and decrypted payload. */
export interface ReceivedPush {
  readonly path: string
  readonly at: number
  readonly headers: Record<string, string>
  readonly vapid: { readonly k: string; readonly claims: { readonly aud: string; readonly exp: number; readonly sub: string } }
  readonly payload: unknown
}

export type PushAnswer = { readonly status: number; readonly headers?: Record<string, string> }

/**
 * A push service on 127.0.0.1 (plain http: Herald reaches loopback only with
 * `HERALD_ALLOW_PRIVATE_NETWORK_TARGETS`). `subscribe(path)` makes a
 * subscription at `/push/<path>`; each request to it is checked (method,
 * `aes128gcm`, TTL, VAPID for this origin), decrypted with that
 * subscription's private key and recorded, then answered with the next of
 * `answers` for the path (default 201 with a `Location`). A request that
 * fails a check answers 400 and is recorded in `failures`.
 */
export class FakePushService extends Context.Service<FakePushService, {
  readonly origin: string
  /** A subscription at `/push/<path>`; restricted to `applicationServerKey` when given (RFC 8292 §3), as browsers make them. */
  readonly subscribe: (path: string, applicationServerKey?: string) => TestSubscription
  readonly received: (path: string) => ReadonlyArray<ReceivedPush>
  /** Answers to give, in order, to the next requests for a path. */
  readonly answer: (path: string, ...answers: ReadonlyArray<PushAnswer>) => void
  readonly failures: Array<string>
  readonly requestCount: () => number
}>()("test/FakePushService") {
  static readonly layer = Layer.effect(FakePushService, Effect.gen(function*() {
    const subscriptions = new Map<string, TestSubscription>()
    const restrictedTo = new Map<string, string>()
    const received = new Map<string, Array<ReceivedPush>>()
    const answers = new Map<string, Array<PushAnswer>>()
    const failures: Array<string> = []
    let count = 0
    let origin = ""
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        count++
        const path = (req.url ?? "").replace(/^\/push\//, "")
        const fail = (reason: string) => {
          failures.push(`${path}: ${reason}`)
          res.writeHead(400).end(reason)
        }
        const subscription = subscriptions.get(path)
        if (req.method !== "POST") return fail(`method ${req.method}`)
        if (subscription === undefined) return void res.writeHead(404).end()
        if (req.headers["content-encoding"] !== "aes128gcm") return fail(`content-encoding ${req.headers["content-encoding"]}`)
        if (!/^\d+$/.test(String(req.headers.ttl))) return fail(`ttl ${req.headers.ttl}`)
        try {
          const vapid = verifyVapid(req.headers.authorization)
          // A push signed with another key than the subscription's is refused (RFC 8292 §4.2).
          const restricted = restrictedTo.get(path)
          if (restricted !== undefined && vapid.k !== restricted) return void res.writeHead(403).end()
          if (vapid.claims.aud !== origin) throw new Error(`aud ${vapid.claims.aud}, expected ${origin}`)
          const now = Math.floor(Date.now() / 1000)
          if (!(vapid.claims.exp > now && vapid.claims.exp <= now + 24 * 3600)) throw new Error(`exp ${vapid.claims.exp}`)
          if (!/^(mailto:|https:)/.test(vapid.claims.sub)) throw new Error(`sub ${vapid.claims.sub}`)
          const payload = JSON.parse(decryptAes128gcm(Buffer.concat(chunks), subscription)) as unknown
          const headers: Record<string, string> = {}
          for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers[name] = value
          const list = received.get(path) ?? []
          list.push({ path, at: Date.now(), headers, vapid, payload })
          received.set(path, list)
        } catch (error) {
          return fail(error instanceof Error ? error.message : String(error))
        }
        const next = answers.get(path)?.shift() ?? { status: 201, headers: { location: `${origin}/message/${randomBytes(6).toString("hex")}` } }
        res.writeHead(next.status, next.headers ?? {}).end()
      })
    })
    yield* Effect.acquireRelease(
      Effect.callback<void, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () => Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
    )
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return {
      origin,
      subscribe: (path, applicationServerKey) => {
        const subscription = makeSubscription(`${origin}/push/${path}`)
        subscriptions.set(path, subscription)
        if (applicationServerKey !== undefined) restrictedTo.set(path, applicationServerKey)
        return subscription
      },
      received: (path) => received.get(path) ?? [],
      answer: (path, ...next) => answers.set(path, [...(answers.get(path) ?? []), ...next]),
      failures,
      requestCount: () => count
    }
  }))
}
