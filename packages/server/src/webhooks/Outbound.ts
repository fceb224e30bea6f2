/**
 * POSTs to user-supplied URLs under the SSRF rules: HTTPS only (plain HTTP
 * only to loopback, and only with `HERALD_ALLOW_PRIVATE_NETWORK_TARGETS`);
 * the host is resolved and every address checked — link-local, metadata,
 * multicast and unspecified addresses always refused, loopback and private
 * ranges refused unless the operator allows them; the connection goes to
 * the vetted address itself (no second lookup an attacker could rebind);
 * redirects are followed only for 307/308 on the same host, each hop vetted
 * again. Nothing here throws: every outcome is a value the caller records.
 * Saving a URL (`checkUrl`) asks no resolver: it judges only what is known
 * without one, so a save never depends on DNS.
 */
import { Duration, Effect, Option } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"

export interface OutboundPolicy {
  readonly allowPrivateNetwork: boolean
  /** The whole attempt, redirects included (decisions.md: 10 s). */
  readonly timeout: Duration.Duration
  readonly maxRedirects: number
}

export type OutboundResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly latencyMs: number }
  /** The target breaks the rules: nothing was sent to it. */
  | { readonly _tag: "Refused"; readonly reason: string; readonly latencyMs: number }
  /** No usable answer: network error, timeout, or a redirect Herald does not follow. */
  | { readonly _tag: "Failed"; readonly reason: string; readonly latencyMs: number }

const MAX_URL_LENGTH = 2048
const RESOLVE_TIMEOUT = Duration.seconds(5)
const MAX_RESPONSE_BYTES = 64 * 1024

const blockList = (v4: ReadonlyArray<readonly [string, number]>, v6: ReadonlyArray<readonly [string, number]>) => {
  const list = new net.BlockList()
  for (const [address, prefix] of v4) list.addSubnet(address, prefix, "ipv4")
  for (const [address, prefix] of v6) list.addSubnet(address, prefix, "ipv6")
  return list
}

/** Never a webhook target: unspecified, link-local (cloud metadata), multicast, reserved, known metadata hosts. */
const alwaysRefused = blockList(
  [["0.0.0.0", 8], ["169.254.0.0", 16], ["224.0.0.0", 4], ["240.0.0.0", 4], ["100.100.100.200", 32], ["192.0.0.0", 24]],
  [["::", 128], ["fe80::", 10], ["ff00::", 8], ["fd00:ec2::254", 128]]
)

/**
 * Loopback and private networks: refused unless the operator allows them.
 * The local-use NAT64 prefix is a site's own translator, whose embedding of
 * the IPv4 address varies: judged private as a whole.
 */
const privateNetworks = blockList(
  [["127.0.0.0", 8], ["10.0.0.0", 8], ["172.16.0.0", 12], ["192.168.0.0", 16], ["100.64.0.0", 10]],
  [["::1", 128], ["fc00::", 7], ["64:ff9b:1::", 48]]
)
const loopback = blockList([["127.0.0.0", 8]], [["::1", 128]])

interface Address {
  readonly address: string
  readonly family: 4 | 6
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail included), or undefined. */
const ipv6Groups = (address: string): ReadonlyArray<number> | undefined => {
  let text = address
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const part = (s: string | undefined) => s === undefined || s === "" ? [] : s.split(":")
  const head = part(halves[0])
  const tail = part(halves[1])
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0
  const groups = [...head, ...Array.from({ length: Math.max(0, fill) }, () => "0"), ...tail].map((g) => /^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)
  return groups.length === 8 && groups.every((g) => !Number.isNaN(g)) ? groups : undefined
}

const carriedPrefixes: ReadonlyArray<ReadonlyArray<number>> = [
  [0, 0, 0, 0, 0, 0xffff], // IPv4-mapped: ::ffff:a.b.c.d
  [0x64, 0xff9b, 0, 0, 0, 0] // well-known NAT64: 64:ff9b::a.b.c.d reaches a.b.c.d through a translator
]

/** An IPv6 address that carries an IPv4 one (mapped, or NAT64) is judged as the IPv4 address it reaches. */
const normalize = ({ address, family }: Address): Address => {
  if (family !== 6) return { address, family }
  const g = ipv6Groups(address)
  if (g !== undefined && carriedPrefixes.some((prefix) => prefix.every((v, i) => g[i] === v))) {
    return { address: [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join("."), family: 4 }
  }
  return { address, family }
}

const matches = (list: net.BlockList, a: Address) => list.check(a.address, a.family === 4 ? "ipv4" : "ipv6")

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

/** Judges the addresses a URL's host is or resolves to (each normalized); fails with the reason it is refused. */
const judge = (policy: OutboundPolicy, url: URL, addresses: ReadonlyArray<Address>): Effect.Effect<void, string> => {
  if (addresses.length === 0) return Effect.fail(`the host ${url.hostname} does not resolve`)
  // The reasons name the host, never what it resolved to: callers do not learn the internal DNS.
  if (addresses.some((a) => matches(alwaysRefused, a))) {
    return Effect.fail(`${url.hostname} is or resolves to a link-local, metadata or reserved address`)
  }
  if (!policy.allowPrivateNetwork && addresses.some((a) => matches(privateNetworks, a))) {
    return Effect.fail(`${url.hostname} is or resolves to a private or loopback address`)
  }
  if (url.protocol === "http:" && !(policy.allowPrivateNetwork && addresses.every((a) => matches(loopback, a)))) {
    return Effect.fail(HTTP_ONLY_TO_LOOPBACK)
  }
  return Effect.void
}

/** Checks a URL against the rules and resolves it; fails with the reason it is refused. */
const vet = (policy: OutboundPolicy, raw: string): Effect.Effect<Vetted, string> =>
  Effect.gen(function*() {
    const url = yield* parse(policy, raw)
    // Judged as the IPv4 address each one carries, but connected to as resolved:
    // a NAT64 address is only reachable through its translator.
    const resolved = yield* resolve(url.hostname)
    yield* judge(policy, url, resolved.map(normalize))
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
    if (literal !== undefined) return yield* judge(policy, url, [normalize(literal)])
    if (isLocalhostName(url.hostname)) return yield* judge(policy, url, [{ address: "127.0.0.1", family: 4 }])
    if (url.protocol === "http:") return yield* Effect.fail(HTTP_ONLY_TO_LOOPBACK)
  })

interface Answer {
  readonly status: number
  readonly location: string | undefined
}

/** One request to the vetted address; the body of the answer is read (bounded) and dropped. */
const request = (target: Vetted, headers: Record<string, string>, body: string) =>
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
      const done = () => resume(Effect.succeed({ status: res.statusCode ?? 0, location: res.headers.location }))
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

export const post = (
  policy: OutboundPolicy,
  message: { readonly url: string; readonly headers: Record<string, string>; readonly body: string }
): Effect.Effect<OutboundResult> => {
  const started = performance.now()
  const elapsed = () => performance.now() - started
  const attempt = Effect.gen(function*() {
    let url = message.url
    for (let hop = 0; ; hop++) {
      const vetted = yield* Effect.result(vet(policy, url))
      if (vetted._tag === "Failure") return { _tag: "Refused", reason: vetted.failure, latencyMs: elapsed() } as const
      const answer = yield* Effect.result(request(vetted.success, message.headers, message.body))
      if (answer._tag === "Failure") return { _tag: "Failed", reason: answer.failure, latencyMs: elapsed() } as const
      const { location, status } = answer.success
      if (status < 300 || status >= 400) return { _tag: "Answered", status, latencyMs: elapsed() } as const
      if ((status !== 307 && status !== 308) || location === undefined) {
        return { _tag: "Failed", reason: `redirect not followed (HTTP ${status})`, latencyMs: elapsed() } as const
      }
      const next = URL.canParse(location, vetted.success.url.href) ? new URL(location, vetted.success.url) : undefined
      if (next === undefined || !sameHost(vetted.success.url, next)) {
        // A redirect off the host is refused when the new host is forbidden, else just not followed.
        if (next !== undefined) {
          const judged = yield* Effect.result(vet(policy, next.toString()))
          if (judged._tag === "Failure") return { _tag: "Refused", reason: `redirect refused: ${judged.failure}`, latencyMs: elapsed() } as const
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
