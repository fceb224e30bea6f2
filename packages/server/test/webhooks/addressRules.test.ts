/**
 * The outbound address rules against the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (RFC 6890 and its updates): one sample address per block
 * with its verdict without and with `HERALD_ALLOW_PRIVATE_NETWORK_TARGETS`,
 * judged at save (an IP literal in the URL) and at send (a name the resolver
 * answers with that address), plus global unicast addresses that must pass.
 *
 * The rule is an allowlist: global unicast only (loopback and private too with
 * the switch). Blocks the registry marks globally reachable are still refused
 * when they are infrastructure no webhook receiver lives in (AS112 DNS sinks,
 * AMT relays, anycast service addresses); carried IPv4 addresses are judged as
 * the address they reach.
 */
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as dns from "node:dns"
import * as net from "node:net"
import { Duration, Effect } from "effect"
import { checkUrl, post } from "../../src/webhooks/Outbound.ts"
import type { OutboundPolicy } from "../../src/webhooks/Outbound.ts"

const open: OutboundPolicy = { allowPrivateNetwork: true, timeout: Duration.seconds(5), maxRedirects: 3 }
const closed: OutboundPolicy = { ...open, allowPrivateNetwork: false }

type Verdict = "allow" | "refuse"
/** [block, sample address, verdict without the switch, verdict with it, why]. */
type Row = readonly [string, string, Verdict, Verdict, string]

const ipv4: ReadonlyArray<Row> = [
  ["0.0.0.0/8", "0.1.2.3", "refuse", "refuse", "\"this network\": never a destination"],
  ["10.0.0.0/8", "10.1.2.3", "refuse", "allow", "private (RFC 1918)"],
  ["100.64.0.0/10", "100.64.0.1", "refuse", "allow", "shared address space (CGN): a private network of the provider's"],
  ["127.0.0.0/8", "127.0.0.1", "refuse", "allow", "loopback"],
  ["169.254.0.0/16", "169.254.169.254", "refuse", "refuse", "link-local: cloud metadata lives here"],
  ["172.16.0.0/12", "172.16.5.5", "refuse", "allow", "private (RFC 1918)"],
  ["192.0.0.0/24", "192.0.0.200", "refuse", "refuse", "IETF protocol assignments"],
  ["192.0.0.0/29", "192.0.0.2", "refuse", "refuse", "IPv4 service continuity (DS-Lite B4/AFTR)"],
  ["192.0.0.8/32", "192.0.0.8", "refuse", "refuse", "IPv4 dummy address"],
  ["192.0.0.9/32", "192.0.0.9", "refuse", "refuse", "PCP anycast: globally reachable, but a protocol's anycast, not a receiver"],
  ["192.0.0.10/32", "192.0.0.10", "refuse", "refuse", "TURN anycast: globally reachable, but a protocol's anycast, not a receiver"],
  ["192.0.0.170/32", "192.0.0.170", "refuse", "refuse", "NAT64/DNS64 discovery"],
  ["192.0.0.171/32", "192.0.0.171", "refuse", "refuse", "NAT64/DNS64 discovery"],
  ["192.0.2.0/24", "192.0.2.1", "refuse", "refuse", "documentation (TEST-NET-1)"],
  ["192.31.196.0/24", "192.31.196.1", "refuse", "refuse", "AS112-v4: globally reachable, but DNS sink servers only"],
  ["192.52.193.0/24", "192.52.193.1", "refuse", "refuse", "AMT relays: globally reachable, but multicast tunnelling only"],
  ["192.88.99.0/24", "192.88.99.1", "refuse", "refuse", "deprecated 6to4 relay anycast"],
  ["192.168.0.0/16", "192.168.1.1", "refuse", "allow", "private (RFC 1918)"],
  ["192.175.48.0/24", "192.175.48.1", "refuse", "refuse", "direct delegation AS112: globally reachable, but DNS sink servers only"],
  ["198.18.0.0/15", "198.18.0.1", "refuse", "refuse", "benchmarking"],
  ["198.18.0.0/15", "198.19.255.1", "refuse", "refuse", "benchmarking (its upper half)"],
  ["198.51.100.0/24", "198.51.100.1", "refuse", "refuse", "documentation (TEST-NET-2)"],
  ["203.0.113.0/24", "203.0.113.1", "refuse", "refuse", "documentation (TEST-NET-3)"],
  ["224.0.0.0/4", "224.0.0.1", "refuse", "refuse", "multicast"],
  ["240.0.0.0/4", "240.0.0.1", "refuse", "refuse", "reserved"],
  ["255.255.255.255/32", "255.255.255.255", "refuse", "refuse", "limited broadcast"],
  ["100.100.100.200/32", "100.100.100.200", "refuse", "refuse", "a cloud metadata service inside the shared space: the switch does not open it"]
]

const ipv6: ReadonlyArray<Row> = [
  ["::1/128", "::1", "refuse", "allow", "loopback"],
  ["::/128", "::", "refuse", "refuse", "unspecified"],
  ["::ffff:0:0/96", "::ffff:127.0.0.1", "refuse", "allow", "IPv4-mapped: judged as the IPv4 it carries (loopback)"],
  ["::ffff:0:0/96", "::ffff:169.254.169.254", "refuse", "refuse", "IPv4-mapped metadata address"],
  ["::ffff:0:0/96", "::ffff:8.8.8.8", "allow", "allow", "IPv4-mapped global address: the same host as 8.8.8.8"],
  ["::/96 (IPv4-compatible)", "::127.0.0.1", "refuse", "refuse", "deprecated (RFC 4291): never a target, whatever it carries"],
  ["::/96 (IPv4-compatible)", "::8.8.8.8", "refuse", "refuse", "deprecated (RFC 4291): never a target, whatever it carries"],
  ["::ffff:0:0:0/96 (IPv4-translated)", "::ffff:0:7f00:1", "refuse", "refuse", "internal to a stateless translator (RFC 6145)"],
  ["64:ff9b::/96", "64:ff9b::192.0.2.2", "refuse", "refuse", "well-known NAT64: judged as the IPv4 it carries (documentation)"],
  ["64:ff9b::/96", "64:ff9b::10.0.0.1", "refuse", "allow", "well-known NAT64 carrying a private address"],
  ["64:ff9b::/96", "64:ff9b::8.8.8.8", "allow", "allow", "well-known NAT64 carrying a global address: globally reachable only as that"],
  ["64:ff9b:1::/48", "64:ff9b:1::808:808", "refuse", "allow", "local-use NAT64: a site's own translator, private as a whole"],
  ["64:ff9b:1::/48", "64:ff9b:1::a9fe:a9fe", "refuse", "refuse", "local-use NAT64 carrying a link-local address"],
  ["100::/64", "100::1", "refuse", "refuse", "discard-only"],
  ["2001::/23", "2001:100::1", "refuse", "refuse", "IETF protocol assignments"],
  ["2001::/32", "2001:0:4136:e378:8000:63bf:80ff:fffe", "refuse", "refuse", "Teredo whose client (last 32 bits, inverted) is 127.0.0.1"],
  ["2001::/32", "2001:0:a00:1:8000:63bf:f7f7:f7f7", "refuse", "refuse", "Teredo whose server (bits 32-63) is 10.0.0.1: a tunnel never reaches a private network"],
  ["2001::/32", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "allow", "allow", "Teredo between two global addresses (65.54.227.120, 8.8.8.8)"],
  ["2001:1::1/128", "2001:1::1", "refuse", "refuse", "port control protocol anycast: a protocol's anycast, not a receiver"],
  ["2001:1::2/128", "2001:1::2", "refuse", "refuse", "TURN anycast: a protocol's anycast, not a receiver"],
  ["2001:1::3/128", "2001:1::3", "refuse", "refuse", "DNS-SD service registration anycast"],
  ["2001:2::/48", "2001:2::1", "refuse", "refuse", "benchmarking"],
  ["2001:3::/32", "2001:3::1", "refuse", "refuse", "AMT: globally reachable, but multicast tunnelling only"],
  ["2001:4:112::/48", "2001:4:112::1", "refuse", "refuse", "AS112-v6: globally reachable, but DNS sink servers only"],
  ["2001:10::/28", "2001:10::1", "refuse", "refuse", "deprecated ORCHID"],
  ["2001:20::/28", "2001:20::1", "refuse", "refuse", "ORCHIDv2: identifiers, not routable"],
  ["2001:30::/28", "2001:30::1", "refuse", "refuse", "drone remote ID entity tags: identifiers, not routable"],
  ["2001:db8::/32", "2001:db8::1", "refuse", "refuse", "documentation"],
  ["2002::/16", "2002:7f00:1::1", "refuse", "refuse", "6to4 of 127.0.0.1"],
  ["2002::/16", "2002:c000:201::1", "refuse", "refuse", "6to4 of a documentation address"],
  ["2002::/16", "2002:808:808::1", "allow", "allow", "6to4 of a global address: reaches that host"],
  ["2620:4f:8000::/48", "2620:4f:8000::1", "refuse", "refuse", "direct delegation AS112: globally reachable, but DNS sink servers only"],
  ["3fff::/20", "3fff::1", "refuse", "refuse", "documentation"],
  ["5f00::/16", "5f00::1", "refuse", "refuse", "SRv6 segment identifiers"],
  ["fc00::/7", "fd12:3456::1", "refuse", "allow", "unique local: private"],
  ["fd00:ec2::254/128", "fd00:ec2::254", "refuse", "refuse", "a cloud metadata service inside unique local: the switch does not open it"],
  ["fe80::/10", "fe80::1", "refuse", "refuse", "link-local"],
  ["fec0::/10", "fec0::1", "refuse", "refuse", "deprecated site-local"],
  ["ff00::/8", "ff02::1", "refuse", "refuse", "multicast"],
  ["outside 2000::/3", "4000::1", "refuse", "refuse", "unassigned: IPv6 global unicast is 2000::/3 only"]
]

const global: ReadonlyArray<Row> = [
  ["global", "8.8.8.8", "allow", "allow", "public DNS"],
  ["global", "1.1.1.1", "allow", "allow", "public DNS"],
  ["global", "93.184.215.14", "allow", "allow", "a web host"],
  ["global", "2606:4700:4700::1111", "allow", "allow", "public DNS"],
  ["global", "2a00:1450:4001:82a::200e", "allow", "allow", "a web host"]
]

const table = [...ipv4, ...ipv6, ...global]
const literalUrl = (address: string) => net.isIPv6(address) ? `https://[${address}]/hook` : `https://${address}/hook`

/** The save-time verdict: `checkUrl` on the address as an IP literal. */
const atSave = (policy: OutboundPolicy, address: string) =>
  Effect.map(Effect.result(checkUrl(policy, literalUrl(address))), (r): Verdict => r._tag === "Success" ? "allow" : "refuse")

/** The send-time verdict for a name the resolver answers with the address: refused before any connection. */
const refusedAtSend = (policy: OutboundPolicy, address: string) =>
  Effect.gen(function*() {
    const lookup = vi.spyOn(dns.promises, "lookup").mockImplementation(
      (async () => [{ address, family: net.isIPv6(address) ? 6 : 4 }]) as never
    )
    const result = yield* post(policy, { url: "https://hooks.example.test/hook", headers: {}, body: "{}" }).pipe(
      Effect.ensuring(Effect.sync(() => lookup.mockRestore()))
    )
    return result._tag === "Refused" && !/\d+\.\d+\.\d+\.\d+|[0-9a-f]*:[0-9a-f:]*:/i.test(result.reason)
  })

describe("outbound address rules: the IANA special-purpose registries", () => {
  it.effect("every block's sample gets its verdict at save, without and with the private-network switch", () =>
    Effect.gen(function*() {
      const verdicts = yield* Effect.forEach(table, ([block, address]) =>
        Effect.map(
          Effect.all([atSave(closed, address), atSave(open, address)]),
          ([without, withSwitch]) => [block, address, without, withSwitch] as const
        ))
      expect(verdicts).toEqual(table.map(([block, address, without, withSwitch]) => [block, address, without, withSwitch]))
    }))

  it.effect("every refused sample is refused at send, when a name resolves to it, before any connection", () =>
    Effect.gen(function*() {
      const refused = (policy: OutboundPolicy, column: 2 | 3) =>
        Effect.forEach(table.filter((row) => row[column] === "refuse"), ([block, address]) =>
          Effect.map(refusedAtSend(policy, address), (ok) => [block, address, ok] as const))
      for (const [policy, column] of [[closed, 2], [open, 3]] as const) {
        const results = yield* refused(policy, column)
        expect(results.filter(([, , ok]) => !ok)).toEqual([])
      }
    }))

  it.effect("a name resolving to several addresses is refused when any one of them is", () =>
    Effect.gen(function*() {
      const lookup = vi.spyOn(dns.promises, "lookup").mockImplementation(
        (async () => [{ address: "8.8.8.8", family: 4 }, { address: "2002:7f00:1::1", family: 6 }]) as never
      )
      yield* Effect.addFinalizer(() => Effect.sync(() => lookup.mockRestore()))
      const result = yield* post(closed, { url: "https://mixed.example.test/hook", headers: {}, body: "{}" })
      expect(result._tag).toBe("Refused")
    }))

  it.effect("plain http stays for loopback only, and only with the switch, carried forms included", () =>
    Effect.gen(function*() {
      const http = (policy: OutboundPolicy, host: string) =>
        Effect.map(Effect.result(checkUrl(policy, `http://${host}:8080/hook`)), (r) => r._tag)
      expect(yield* http(open, "127.0.0.1")).toBe("Success")
      expect(yield* http(open, "[::1]")).toBe("Success")
      expect(yield* http(open, "[::ffff:127.0.0.1]")).toBe("Success")
      expect(yield* http(open, "10.0.0.1")).toBe("Failure")
      expect(yield* http(open, "[::127.0.0.1]")).toBe("Failure")
      expect(yield* http(open, "[2002:7f00:1::1]")).toBe("Failure")
      expect(yield* http(open, "8.8.8.8")).toBe("Failure")
      expect(yield* http(closed, "127.0.0.1")).toBe("Failure")
    }))
})
