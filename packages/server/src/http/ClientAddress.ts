/**
 * The client address a per-address limit is keyed by (AddressThrottle.ts).
 *
 * - The socket's peer, unless it is one of the operator's trusted proxies
 *   (`HERALD_TRUSTED_PROXIES`): then the right-most `X-Forwarded-For` entry
 *   that is not itself a trusted proxy. Entries left of it are whatever the
 *   client wrote, so they are never read: a client cannot pick its own key.
 * - An IPv6 address counts as its /64: one subscriber usually holds a whole
 *   /64, so keying by the full address would hand out 2^64 budgets.
 * - An entry that does not parse as an address falls back to the socket's
 *   peer (the proxy), never to the text itself (a fresh key per request).
 */
import { BlockList, isIP } from "node:net"

/** Parses `HERALD_TRUSTED_PROXIES`: comma-separated IPs or CIDRs; the entries it cannot read, for the error. */
export const parseTrustedProxies = (text: string): { readonly list: BlockList; readonly invalid: ReadonlyArray<string> } => {
  const list = new BlockList()
  const invalid: Array<string> = []
  for (const raw of text.split(",")) {
    const entry = raw.trim()
    if (entry === "") continue
    const slash = entry.indexOf("/")
    const address = slash === -1 ? entry : entry.slice(0, slash)
    const family = isIP(address)
    const prefix = slash === -1 ? undefined : entry.slice(slash + 1)
    const bits = prefix === undefined ? undefined : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
    if (family === 0 || (bits !== undefined && !(bits <= (family === 4 ? 32 : 128)))) {
      invalid.push(entry)
      continue
    }
    const type = family === 4 ? "ipv4" : "ipv6"
    if (bits === undefined) list.addAddress(address, type)
    else list.addSubnet(address, bits, type)
  }
  return { list, invalid }
}

/** An address as a forwarding header may write it: `1.2.3.4`, `1.2.3.4:5678`, `[::1]`, `[::1]:443`, `fe80::1%eth0`. */
const bare = (entry: string): string => {
  let text = entry.trim()
  if (text.startsWith("[")) {
    const end = text.indexOf("]")
    text = end === -1 ? text : text.slice(1, end)
  } else if (text.indexOf(":") !== -1 && text.indexOf(":") === text.lastIndexOf(":") && text.indexOf(".") !== -1) {
    text = text.slice(0, text.indexOf(":"))
  }
  const zone = text.indexOf("%")
  return zone === -1 ? text : text.slice(0, zone)
}

/** The 8 groups of an IPv6 address (already checked by `isIP`); undefined when it does not parse. */
const ipv6Groups = (address: string): Array<number> | undefined => {
  let text = address.toLowerCase()
  const lastColon = text.lastIndexOf(":")
  // An embedded IPv4 tail (`::ffff:1.2.3.4`) as its two groups.
  if (text.indexOf(".", lastColon) !== -1) {
    const v4 = text.slice(lastColon + 1).split(".").map(Number)
    text = `${text.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`
  }
  const [head, rest] = text.split("::") as [string, string | undefined]
  const parse = (part: string) => part === "" ? [] : part.split(":").map((g) => parseInt(g, 16))
  const left = parse(head)
  const right = rest === undefined ? [] : parse(rest)
  const missing = 8 - left.length - right.length
  if (missing < 0 || (rest === undefined && missing !== 0)) return undefined
  const groups = [...left, ...Array<number>(missing).fill(0), ...right]
  return groups.some((g) => !(g >= 0 && g <= 0xffff)) ? undefined : groups
}

/**
 * The key of an address: an IPv4 address as written (an IPv4-mapped IPv6
 * address as its IPv4), an IPv6 address as its /64; undefined when it is not
 * an address.
 */
export const addressKey = (address: string): string | undefined => {
  const family = isIP(address)
  if (family === 4) return address
  if (family !== 6) return undefined
  const groups = ipv6Groups(address)
  if (groups === undefined) return undefined
  // ::ffff:a.b.c.d — an IPv4 client seen through a dual-stack socket.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`
}

const isTrusted = (trusted: BlockList, address: string): boolean => {
  const family = isIP(address)
  return family !== 0 && trusted.check(address, family === 4 ? "ipv4" : "ipv6")
}

/**
 * The address of a request's client, as written (the audit log's `ip`):
 * `peer` is the socket's remote address, `forwardedFor` the
 * `X-Forwarded-For` header (Node joins repeated ones with commas), `trusted`
 * the operator's proxies (undefined: none). The peer unless it is a trusted
 * proxy; then the right-most forwarded entry that is not itself trusted (an
 * entry that is not an address: the peer).
 */
export const clientAddress = (peer: string | undefined, forwardedFor: string | undefined, trusted: BlockList | undefined): string | undefined => {
  const peerAddress = peer === undefined ? undefined : bare(peer)
  if (trusted === undefined || forwardedFor === undefined || peerAddress === undefined || !isTrusted(trusted, peerAddress)) return peerAddress
  const hops = forwardedFor.split(",")
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = bare(hops[i]!)
    if (addressKey(hop) === undefined) return peerAddress
    // The left-most entry is the client even when it is a trusted address itself (every hop trusted).
    if (i === 0 || !isTrusted(trusted, hop)) return hop
  }
  return peerAddress
}

/** The key of a request's client (`clientAddress`'s address as `addressKey` counts it). */
export const clientKey = (peer: string | undefined, forwardedFor: string | undefined, trusted: BlockList | undefined): string => {
  const address = clientAddress(peer, forwardedFor, trusted)
  return address === undefined ? "unknown" : addressKey(address) ?? "unknown"
}
