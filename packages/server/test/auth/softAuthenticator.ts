/**
 * A software WebAuthn authenticator over node:crypto, for tests: an ES256 key
 * pair per credential, `none` attestation, CBOR written by hand. It answers
 * the JSON a browser's `PublicKeyCredential.toJSON()` would, built the way
 * the WebAuthn spec says an authenticator and client do (client data, RP id
 * hash, flags, counter, attested credential data, COSE key), so the server's
 * verification runs on real signatures, not on mocks.
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto"
import type { KeyObject } from "node:crypto"

// ── CBOR (RFC 8949), the few major types WebAuthn needs ──────────────────────

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>

const head = (major: number, value: number): Buffer => {
  if (value < 24) return Buffer.from([(major << 5) | value])
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value])
  if (value < 0x10000) return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff])
  const b = Buffer.alloc(5)
  b[0] = (major << 5) | 26
  b.writeUInt32BE(value, 1)
  return b
}

export const cbor = (value: Cbor): Buffer => {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8")
    return Buffer.concat([head(3, bytes.length), bytes])
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

// ── the authenticator ────────────────────────────────────────────────────────

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url")
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest()

const UP = 0x01
const UV = 0x04
const AT = 0x40

export interface SoftCredential {
  readonly id: Buffer
  readonly privateKey: KeyObject
  /** The COSE public key, as attested. */
  readonly cose: Buffer
  readonly userHandle: string
  counter: number
}

export interface ClientContext {
  /** The origin the browser is on (`clientDataJSON.origin`). */
  readonly origin: string
  /** The RP id the authenticator scopes the credential to (its SHA-256 starts `authenticatorData`). */
  readonly rpId: string
}

const clientData = (type: "webauthn.create" | "webauthn.get", challenge: string, origin: string) =>
  Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))

/** `navigator.credentials.create()` for creation options: a new ES256 credential and its JSON. */
export const create = (
  options: { readonly challenge: string; readonly user: { readonly id: string } },
  context: ClientContext,
  settings: { readonly userVerified?: boolean; readonly counter?: number; readonly same?: SoftCredential } = {}
) => {
  const fresh = () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const jwk = publicKey.export({ format: "jwk" })
    const cose = cbor(new Map<Cbor, Cbor>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, "base64url")],
      [-3, Buffer.from(jwk.y!, "base64url")]
    ]))
    return { privateKey, cose, id: randomBytes(32) }
  }
  // `same`: attest an existing credential again (a second registration of one passkey).
  const { cose, id, privateKey } = settings.same ?? fresh()
  const counter = settings.counter ?? 0
  const counterBytes = Buffer.alloc(4)
  counterBytes.writeUInt32BE(counter)
  const idLength = Buffer.alloc(2)
  idLength.writeUInt16BE(id.length)
  const authData = Buffer.concat([
    sha256(context.rpId),
    Buffer.from([UP | (settings.userVerified === false ? 0 : UV) | AT]),
    counterBytes,
    Buffer.alloc(16), // AAGUID: none
    idLength,
    id,
    cose
  ])
  const attestationObject = cbor(new Map<Cbor, Cbor>([["fmt", "none"], ["attStmt", new Map()], ["authData", authData]]))
  const credential: SoftCredential = { id, privateKey, cose, userHandle: options.user.id, counter }
  const json = {
    id: b64url(id),
    rawId: b64url(id),
    type: "public-key" as const,
    response: {
      clientDataJSON: b64url(clientData("webauthn.create", options.challenge, context.origin)),
      attestationObject: b64url(attestationObject),
      transports: ["internal"]
    },
    authenticatorAttachment: "platform",
    clientExtensionResults: {}
  }
  return { credential, json }
}

/** `navigator.credentials.get()` for request options with this credential: an assertion's JSON. */
export const get = (
  credential: SoftCredential,
  options: { readonly challenge: string },
  context: ClientContext,
  settings: { readonly counter?: number; readonly userHandle?: string | null } = {}
) => {
  credential.counter = settings.counter ?? credential.counter + 1
  const counterBytes = Buffer.alloc(4)
  counterBytes.writeUInt32BE(credential.counter)
  const authData = Buffer.concat([sha256(context.rpId), Buffer.from([UP | UV]), counterBytes])
  const clientDataJSON = clientData("webauthn.get", options.challenge, context.origin)
  // ECDSA over authenticatorData ‖ SHA-256(clientDataJSON), DER-encoded as WebAuthn sends it.
  const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey)
  const handle = settings.userHandle === undefined ? credential.userHandle : settings.userHandle
  return {
    id: b64url(credential.id),
    rawId: b64url(credential.id),
    type: "public-key" as const,
    response: {
      clientDataJSON: b64url(clientDataJSON),
      authenticatorData: b64url(authData),
      signature: b64url(signature),
      ...(handle === null ? {} : { userHandle: handle })
    },
    authenticatorAttachment: "platform",
    clientExtensionResults: {}
  }
}
