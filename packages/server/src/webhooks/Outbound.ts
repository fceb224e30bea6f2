/**
 * POSTs to user-supplied URLs (reply webhooks, Web Push endpoints) under
 * the SSRF rules: HTTPS only (plain HTTP only to loopback, and only with
 * `HERALD_ALLOW_PRIVATE_NETWORK_TARGETS`);
 * the host is resolved and every address judged by `AddressRules` (an
 * allowlist: global unicast only, loopback and private ranges too when the
 * operator allows them, embedded IPv4 forms decoded); the connection goes to
 * the vetted address itself (no second lookup an attacker could rebind);
 * redirects are followed only for 307/308 on the same host, each hop vetted
 * again. Nothing here throws: every outcome is a value the caller records,
 * and a refusal (the rules forbid the target) is told apart from a failure
 * (a name that does not resolve, a network error), which may pass later.
 * Saving a URL (`checkUrl`) asks no resolver: it judges only what is known
 * without one, so a save never depends on DNS.
 */
import { Duration, Effect, Option } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { classify, permitted } from "./AddressRules.ts"

export interface OutboundPolicy {
  readonly allowPrivateNetwork: boolean
  /** The whole attempt, redirects included (decisions.md: 10 s). */
  readonly timeout: Duration.Duration
  readonly maxRedirects: number
}

export type OutboundResult =
  | {
    readonly _tag: "Answered"
    readonly status: number
    readonly latencyMs: number
    /** The answer's headers (a push service's `Location`, `Retry-After`). */
    readonly headers: http.IncomingHttpHeaders
  }
  /** The target breaks the rules: nothing was sent to it. */
  | { readonly _tag: "Refused"; readonly reason: string; readonly latencyMs: number }
  /** No usable answer: a name that does not resolve, a network error, a timeout, or a redirect Herald does not follow. */
  | { readonly _tag: "Failed"; readonly reason: string; readonly latencyMs: number }

const MAX_URL_LENGTH = 2048
const RESOLVE_TIMEOUT = Duration.seconds(5)
const MAX_RESPONSE_BYTES = 64 * 1024

interface Address {
  readonly address: string
  readonly family: 4 | 6
}

/** The address a host names literally (an IPv6 one in brackets), if it is one. */
const literalAddress = (host: string): Address | undefined => {
  const literal = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  const family = net.isIP(literal)
  return family === 0 ? undefined : { address: literal, family: family as 4 | 6 }
}

const resolve = (host: string): Effect.Effect<ReadonlyArray<Address>, string> => {
  const literal = literalAddress(host)
  if (literal !== undefined) return Effect.succeed([literal])
  // The system resolver cannot be cancelled, but no caller waits on it for longer than this.
  return Effect.tryPromise({
    try: () => dns.promises.lookup(host, { all: true, verbatim: true }),
    catch: () => `the host ${host} does not resolve`
  }).pipe(
    Effect.timeoutOption(RESOLVE_TIMEOUT),
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(`the host ${host} did not resolve within ${Duration.toSeconds(RESOLVE_TIMEOUT)} s`),
      onSome: (all) => Effect.succeed(all.map((a) => ({ address: a.address, family: a.family as 4 | 6 })))
    }))
  )
}

/** A URL that passed the rules, with the address to connect to. */
interface Vetted {
  readonly url: URL
  readonly address: Address
}

/** The rules that need no lookup: the URL's length, form, scheme and credentials. */
const parse = (policy: OutboundPolicy, raw: string): Effect.Effect<URL, string> => {
  if (raw.length > MAX_URL_LENGTH) return Effect.fail(`the URL is longer than ${MAX_URL_LENGTH} characters`)
  if (!URL.canParse(raw)) return Effect.fail("the URL is not an absolute URL")
  const url = new URL(raw)
  if (url.protocol !== "https:" && url.protocol !== "http:") return Effect.fail("only https:// URLs are allowed")
  if (url.username !== "" || url.password !== "") return Effect.fail("credentials in the URL are not allowed")
  if (url.protocol === "http:" && !policy.allowPrivateNetwork) return Effect.fail("only https:// URLs are allowed")
  return Effect.succeed(url)
}

const HTTP_ONLY_TO_LOOPBACK = "only https:// URLs are allowed (plain http only to loopback, in local development)"

/** Judges the addresses a URL's host is or resolves to; fails with the reason it is refused. */
const judge = (policy: OutboundPolicy, url: URL, addresses: ReadonlyArray<Address>): Effect.Effect<void, string> => {
  const classes = addresses.map((a) => classify(a.address))
  // The reasons name the host, never what it resolved to: callers do not learn the internal DNS.
  if (classes.some((c) => c === "forbidden")) {
    return Effect.fail(`${url.hostname} is or resolves to a link-local, metadata, reserved or other non-global address`)
  }
  if (!classes.every((c) => permitted(c, policy.allowPrivateNetwork))) {
    return Effect.fail(`${url.hostname} is or resolves to a private or loopback address`)
  }
  if (url.protocol === "http:" && !(policy.allowPrivateNetwork && classes.every((c) => c === "loopback"))) {
    return Effect.fail(HTTP_ONLY_TO_LOOPBACK)
  }
  return Effect.void
}

/** Why a URL was not vetted: the rules refuse it, or its name did not resolve (which may pass later). */
interface NotVetted {
  readonly refused: boolean
  readonly reason: string
}

/** Checks a URL against the rules and resolves it. */
const vet = (policy: OutboundPolicy, raw: string): Effect.Effect<Vetted, NotVetted> =>
  Effect.gen(function*() {
    const refuse = Effect.mapError((reason: string) => ({ refused: true, reason }) as const)
    const url = yield* refuse(parse(policy, raw))
    // Judged as the IPv4 address a mapped or NAT64 address carries, but connected to as
    // resolved: a NAT64 address is only reachable through its translator.
    const resolved = yield* resolve(url.hostname).pipe(Effect.mapError((reason) => ({ refused: false, reason }) as const))
    if (resolved.length === 0) return yield* Effect.fail({ refused: false, reason: `the host ${url.hostname} does not resolve` } as const)
    yield* refuse(judge(policy, url, resolved))
    return { url, address: resolved[0]! }
  })

/** `localhost` and every name under it are loopback by definition (RFC 6761), whatever a resolver says. */
const isLocalhostName = (host: string) => {
  const name = host.toLowerCase().replace(/\.$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}

/**
 * Refuses a URL at save time with the reason, or accepts it. No lookup: a
 * saved URL never depends on DNS, so only what is known without one is
 * judged (IP literals, `localhost` names); every send resolves the host and
 * judges the addresses it gets. Plain http names no address here, so it is
 * accepted only to a loopback literal or a `localhost` name.
 */
export const checkUrl = (policy: OutboundPolicy, raw: string): Effect.Effect<void, string> =>
  Effect.gen(function*() {
    const url = yield* parse(policy, raw)
    const literal = literalAddress(url.hostname)
    if (literal !== undefined) return yield* judge(policy, url, [literal])
    if (isLocalhostName(url.hostname)) return yield* judge(policy, url, [{ address: "127.0.0.1", family: 4 }])
    if (url.protocol === "http:") return yield* Effect.fail(HTTP_ONLY_TO_LOOPBACK)
  })

interface Answer {
  readonly status: number
  readonly location: string | undefined
  readonly headers: http.IncomingHttpHeaders
}

/** One request to the vetted address; the body of the answer is read (bounded) and dropped. */
const request = (target: Vetted, headers: Record<string, string>, body: string | Uint8Array) =>
  Effect.callback<Answer, string>((resume, signal) => {
    const { address, family } = target.address
    const pinned: net.LookupFunction = (_host, options, callback) => {
      if (options.all === true) (callback as (e: null, a: ReadonlyArray<dns.LookupAddress>) => void)(null, [{ address, family }])
      else callback(null, address, family)
    }
    const module = target.url.protocol === "https:" ? https : http
    const req = module.request(target.url, {
      method: "POST",
      headers: { "user-agent": "Herald-Webhooks/1.0", "content-type": "application/json", ...headers, "content-length": Buffer.byteLength(body) },
      lookup: pinned,
      // A fresh connection per attempt: never a pooled socket to an address vetted for another URL.
      agent: false,
      signal
    }, (res) => {
      let read = 0
      res.on("data", (chunk: Buffer) => {
        read += chunk.length
        if (read > MAX_RESPONSE_BYTES) res.destroy()
      })
      const done = () => resume(Effect.succeed({ status: res.statusCode ?? 0, location: res.headers.location, headers: res.headers }))
      res.on("end", done)
      res.on("close", done)
      res.on("error", done)
    })
    // The error's code (ECONNREFUSED, a TLS failure…), never its message: that names the address connected to.
    req.on("error", (error: NodeJS.ErrnoException) => resume(Effect.fail(connectionFailure(error))))
    req.end(body)
  })

const connectionFailure = (error: NodeJS.ErrnoException) =>
  error.code !== undefined ? `connection failed (${error.code})` : "connection failed"

const sameHost = (from: URL, to: URL) =>
  from.hostname === to.hostname && from.port === to.port && !(from.protocol === "https:" && to.protocol === "http:")

/**
 * POSTs `body` (JSON unless `headers` name another `content-type`, e.g. a
 * Web Push message's encrypted bytes) to `url` under the rules.
 */
export const post = (
  policy: OutboundPolicy,
  message: { readonly url: string; readonly headers: Record<string, string>; readonly body: string | Uint8Array }
): Effect.Effect<OutboundResult> => {
  const started = performance.now()
  const elapsed = () => performance.now() - started
  const attempt = Effect.gen(function*() {
    let url = message.url
    for (let hop = 0; ; hop++) {
      const vetted = yield* Effect.result(vet(policy, url))
      if (vetted._tag === "Failure") return { _tag: vetted.failure.refused ? "Refused" : "Failed", reason: vetted.failure.reason, latencyMs: elapsed() } as const
      const answer = yield* Effect.result(request(vetted.success, message.headers, message.body))
      if (answer._tag === "Failure") return { _tag: "Failed", reason: answer.failure, latencyMs: elapsed() } as const
      const { headers, location, status } = answer.success
      if (status < 300 || status >= 400) return { _tag: "Answered", status, latencyMs: elapsed(), headers } as const
      if ((status !== 307 && status !== 308) || location === undefined) {
        return { _tag: "Failed", reason: `redirect not followed (HTTP ${status})`, latencyMs: elapsed() } as const
      }
      const next = URL.canParse(location, vetted.success.url.href) ? new URL(location, vetted.success.url) : undefined
      if (next === undefined || !sameHost(vetted.success.url, next)) {
        // A redirect off the host is refused when the new host is forbidden, else just not followed.
        if (next !== undefined) {
          const judged = yield* Effect.result(vet(policy, next.toString()))
          if (judged._tag === "Failure" && judged.failure.refused) {
            return { _tag: "Refused", reason: `redirect refused: ${judged.failure.reason}`, latencyMs: elapsed() } as const
          }
        }
        return { _tag: "Failed", reason: `redirect to another host refused (HTTP ${status})`, latencyMs: elapsed() } as const
      }
      if (hop >= policy.maxRedirects) return { _tag: "Failed", reason: "too many redirects", latencyMs: elapsed() } as const
      url = next.toString()
    }
  })
  return attempt.pipe(
    Effect.timeoutOption(policy.timeout),
    Effect.map((result) =>
      result._tag === "Some"
        ? result.value
        : { _tag: "Failed", reason: `timed out after ${Duration.toMillis(policy.timeout)} ms`, latencyMs: elapsed() } as const
    )
  )
}
