/**
 * Herald secrets out of log lines. A client may put a secret anywhere in a
 * URL (`?access_token=hld_…`, `/x?foo=hlo_…`, a path segment) or in a header
 * Herald echoes into its logs (`X-Request-Id`), and a log line is read by
 * more people than the secret's owner. So every part of a logged URL that
 * holds something shaped like a Herald secret — any kind, under any parameter
 * name, percent-encoded or not — is shown as `…`.
 */
import type { SecretKind } from "../auth/Secrets.ts"

/** Shown instead of a redacted part. */
export const REDACTED = "…"

// Every kind of auth/Secrets.ts (a new kind fails to compile until it is listed here).
const heraldKinds: Record<SecretKind, true> = { hld: true, hls: true, hlw: true, hlo: true, hlr: true, hla: true, hlc: true, hll: true }

// The other secrets Herald hands out, each under its own prefix: connector callback secrets
// (connectors/Callbacks.ts: `hcb_`, base64url), gateway passes and sessions (connectors/Passes.ts:
// `hcp_`, `hcs_`), reply-webhook signing secrets (webhooks/Signing.ts: `whsec_`, base64). At least
// 16 characters after the prefix: shorter is no secret (a read shows the first 8 as `displayPrefix`).
const pattern = [
  `(?:${Object.keys(heraldKinds).join("|")})_[0-9A-Za-z]{16,}`,
  "(?:hcb|hcp|hcs)_[0-9A-Za-z_-]{16,}",
  "whsec_[0-9A-Za-z+/=]{16,}"
].join("|")
const shaped = new RegExp(pattern, "iu")
const shapedEverywhere = new RegExp(pattern, "giu")

// Percent-escapes are decoded a few times over, so `hld%5F…` or `hld%255F…` is still seen.
const decodings = (text: string): ReadonlyArray<string> => {
  const out = [text]
  let current = text
  for (let i = 0; i < 3; i++) {
    let next: string
    try {
      next = decodeURIComponent(current.replaceAll("+", " "))
    } catch {
      next = current.replace(/%([0-9A-Fa-f]{2})/gu, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    }
    if (next === current) break
    out.push(next)
    current = next
  }
  return out
}

/** True when the text holds something shaped like a Herald secret, as written or percent-decoded. */
export const holdsSecret = (text: string): boolean => decodings(text).some((t) => shaped.test(t))

const redactQueryPart = (part: string): string => {
  const eq = part.indexOf("=")
  if (eq === -1) return holdsSecret(part) ? REDACTED : part
  const name = part.slice(0, eq)
  if (holdsSecret(name)) return REDACTED
  return holdsSecret(part.slice(eq + 1)) ? `${name}=${REDACTED}` : part
}

/**
 * The URL (origin form: path and query) with every path segment, query
 * parameter name or value that holds a secret shown as `…`; unchanged when
 * none does.
 */
export const redactSecrets = (url: string): string => {
  if (!holdsSecret(url)) return url
  const query = url.indexOf("?")
  const path = (query === -1 ? url : url.slice(0, query)).split("/").map((s) => holdsSecret(s) ? REDACTED : s).join("/")
  const parts = query === -1
    ? path
    : `${path}?${url.slice(query + 1).split(/([&;])/u).map((p, i) => i % 2 === 1 ? p : redactQueryPart(p)).join("")}`
  // A base64 secret may span a `/` (no one segment shows it whole): what is left is cut out as written.
  return parts.replace(shapedEverywhere, REDACTED)
}
