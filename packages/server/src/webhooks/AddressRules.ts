/**
 * Which addresses a webhook may reach: an allowlist. An address passes only
 * when `ipaddr.js` (a maintained library whose range tables follow the IANA
 * special-purpose registries) classifies it as `unicast`, i.e. in none of its
 * special ranges. Loopback and private ranges (RFC 1918, shared address space,
 * unique local) pass too when the operator allows private-network targets;
 * everything else — link-local and metadata, documentation, benchmarking,
 * reserved, multicast, AS112, AMT, ORCHID… — is refused with or without it.
 *
 * IPv6 forms that carry an IPv4 address are decoded and the carried address
 * judged: mapped `::ffff:a.b.c.d` and well-known NAT64 `64:ff9b::/96` reach that
 * IPv4 host and are judged as it; 6to4 and Teredo tunnel to their embedded
 * addresses and pass only when every one of them is global; the local-use
 * NAT64 prefix is a site's own translator (private) and its carried address is
 * judged as well; IPv4-compatible and IPv4-translated addresses are deprecated
 * or translator-internal forms and never a target.
 */
import ipaddr from "ipaddr.js"

/** The class of an address, from most to least permitted. */
export type AddressClass = "global" | "loopback" | "private" | "forbidden"

const rank: Record<AddressClass, number> = { global: 0, loopback: 1, private: 2, forbidden: 3 }
const worst = (...classes: ReadonlyArray<AddressClass>): AddressClass =>
  classes.reduce((a, b) => (rank[b] > rank[a] ? b : a), "global")

const cidr = (text: string) => ipaddr.parseCIDR(text)

/**
 * Refused beyond the library's tables. Cloud metadata endpoints outside
 * link-local (Alibaba's sits in the shared address space, AWS's IPv6 one in
 * unique-local), which the private-network switch must not open.
 */
const metadata = [cidr("100.100.100.200/32"), cidr("fd00:ec2::254/128")]

/**
 * IPv6 global unicast is 2000::/3 (RFC 4291, IANA IPv6 Address Space): the
 * library calls anything outside its special ranges `unicast`, unassigned
 * space (e.g. 4000::/3) included, so that space is refused explicitly.
 */
const globalUnicastV6 = cidr("2000::/3")

const mapped = cidr("::ffff:0:0/96")
const nat64WellKnown = cidr("64:ff9b::/96")
const nat64LocalUse = cidr("64:ff9b:1::/48")
const sixToFour = cidr("2002::/16")
const teredo = cidr("2001::/32")
/** IPv4-compatible (RFC 4291 §2.5.5.1, deprecated); the library knows only ::/128 and ::1/128 in it. */
const compatible = cidr("::/96")
/** IPv4-translated (RFC 2765/6145): internal to a stateless translator. */
const translated = cidr("::ffff:0:0:0/96")

const ipv4Of = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])

const classifyV4 = (ip: ipaddr.IPv4): AddressClass => {
  if (metadata.some((range) => ip.kind() === range[0].kind() && ip.match(range))) return "forbidden"
  switch (ip.range()) {
    case "unicast":
      return "global"
    case "loopback":
      return "loopback"
    case "private":
    case "carrierGradeNat":
      return "private"
    default:
      return "forbidden"
  }
}

/** The IPv4 addresses an IPv6 address carries, and how its class follows from theirs; undefined when it carries none. */
const carried = (ip: ipaddr.IPv6): AddressClass | undefined => {
  const p = ip.parts
  const last = () => classifyV4(ipv4Of(p[6]!, p[7]!))
  if (ip.match(mapped) || ip.match(nat64WellKnown)) return last()
  if (ip.match(nat64LocalUse)) return worst("private", last())
  // A tunnel never legitimately reaches a private network: only a global embedded address passes.
  const tunnel = (embedded: ReadonlyArray<ipaddr.IPv4>) =>
    embedded.every((v4) => classifyV4(v4) === "global") ? "global" : "forbidden"
  if (ip.match(sixToFour)) return tunnel([ipv4Of(p[1]!, p[2]!)])
  // Teredo: the server's IPv4 in bits 32–63, the client's in the last 32 bits, inverted.
  if (ip.match(teredo)) return tunnel([ipv4Of(p[2]!, p[3]!), ipv4Of(p[6]! ^ 0xffff, p[7]! ^ 0xffff)])
  if (ip.match(translated)) return "forbidden"
  if (ip.match(compatible) && ip.range() === "unicast") return "forbidden"
  return undefined
}

const classifyV6 = (ip: ipaddr.IPv6): AddressClass => {
  if (metadata.some((range) => ip.kind() === range[0].kind() && ip.match(range))) return "forbidden"
  const viaIPv4 = carried(ip)
  if (viaIPv4 !== undefined) return viaIPv4
  switch (ip.range()) {
    case "unicast":
      return ip.match(globalUnicastV6) ? "global" : "forbidden"
    case "loopback":
      return "loopback"
    case "uniqueLocal":
      return "private"
    default:
      return "forbidden"
  }
}

/**
 * An IPv6 address's dotted IPv4 tail rewritten as two hex groups. The library
 * reads `::a.b.c.d` (IPv4-compatible, the way `inet_ntop` prints it) as the
 * mapped `::ffff:a.b.c.d`; the hex form is parsed as written.
 */
const hexTail = (address: string) =>
  address.includes(":")
    ? address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
      [Number(a), Number(b), Number(c), Number(d)].some((n) => n > 255)
        ? "invalid"
        : `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`)
    : address

/** The class of an IP address given as text; anything unparsable is forbidden. */
export const classify = (text: string): AddressClass => {
  const address = hexTail(text)
  if (!ipaddr.isValid(address)) return "forbidden"
  const ip = ipaddr.parse(address)
  return ip.kind() === "ipv4" ? classifyV4(ip as ipaddr.IPv4) : classifyV6(ip as ipaddr.IPv6)
}

/** Whether an address of this class may be reached under the operator's private-network switch. */
export const permitted = (cls: AddressClass, allowPrivateNetwork: boolean): boolean =>
  cls === "global" || (allowPrivateNetwork && (cls === "loopback" || cls === "private"))
