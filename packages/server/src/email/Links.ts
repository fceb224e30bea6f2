/**
 * The links of mailed answers, acknowledgements and address checks: signed,
 * so a forged or altered link is refused before anything is read (a 404),
 * and short enough for a path segment (the router's 100 characters).
 *
 * A token is `<kind>.<ref>.<arg>.<expires>.<signature>`: the kind (`p` a
 * prompt's answer, `g` a page's acknowledgement, `v` an address check), the
 * item's id, the answer (a status, `c<i>` choice i of a reply prompt, `r` a
 * free-text reply, `ack`, or the checked address's hash), the end of its life
 * (epoch seconds, base 36) and an HMAC-SHA256 over the rest with the server's
 * key (`server_secrets`, shared by every node), cut to 132 bits. A link
 * carries no state of its own: it works once because what it does moves its
 * item from the one state it applies to (a pending prompt, a triggered page).
 */
import { Context, Effect, Layer } from "effect"
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import { ServerSecrets } from "../db/ServerSecrets.ts"

export type LinkKind = "p" | "g" | "v"

export interface LinkClaims {
  readonly kind: LinkKind
  readonly ref: string
  readonly arg: string
  /** Epoch milliseconds (second precision). */
  readonly expiresAt: number
}

const SIGNATURE_CHARS = 22
const PART = /^[A-Za-z0-9_:-]{1,40}$/

/** The hash of an address a verification link is for (lower-cased): a changed address makes the link useless. */
export const addressHash = (address: string) => createHash("sha256").update(address.toLowerCase()).digest("hex").slice(0, 16)

export class EmailLinks extends Context.Service<EmailLinks, {
  readonly sign: (claims: LinkClaims) => string
  /** The claims of a well-formed, correctly signed token (expired or not); undefined otherwise. */
  readonly verify: (token: string) => LinkClaims | undefined
}>()("herald/EmailLinks") {
  static readonly layerNoDeps = Layer.effect(EmailLinks, Effect.gen(function*() {
    const key = Buffer.from(yield* Effect.flatMap(ServerSecrets, (s) => s.key("email-links")), "hex")
    const mac = (payload: string) => createHmac("sha256", key).update(payload).digest("base64url").slice(0, SIGNATURE_CHARS)
    return EmailLinks.of({
      sign: (claims) => {
        const payload = [claims.kind, claims.ref, claims.arg, Math.floor(claims.expiresAt / 1000).toString(36)].join(".")
        return `${payload}.${mac(payload)}`
      },
      verify: (token) => {
        const parts = token.split(".")
        if (parts.length !== 5) return undefined
        const [kind, ref, arg, expires, signature] = parts as [string, string, string, string, string]
        if (kind !== "p" && kind !== "g" && kind !== "v") return undefined
        if (!PART.test(ref) || !PART.test(arg) || !/^[0-9a-z]{1,10}$/.test(expires)) return undefined
        const expected = Buffer.from(mac(parts.slice(0, 4).join(".")))
        const given = Buffer.from(signature)
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
        return { kind, ref, arg, expiresAt: parseInt(expires, 36) * 1000 }
      }
    })
  }))

  static readonly layer = EmailLinks.layerNoDeps.pipe(Layer.provide(ServerSecrets.layer))
}
