/**
 * Team domain verification (decisions.md "Domain"): which DNS servers answer
 * the TXT lookup, and how long one lookup may take. Tests point the resolver
 * at a DNS server on loopback and shorten the timeout.
 */
import { Config, Context, Duration, Effect, Layer, Option } from "effect"
import { isIP } from "node:net"
import * as Env from "./Variable.ts"

export interface DomainConfigShape {
  /** `ip` or `ip:port` (`[v6]:port`) entries for `Resolver.setServers`; empty = the system's resolvers. */
  readonly dnsServers: ReadonlyArray<string>
  /** One TXT lookup's bound (decisions.md: 5 s). */
  readonly dnsTimeout: Duration.Duration
}

export const domainVariables = {
  dnsServers: Env.optionalString("HERALD_DNS_SERVERS", {
    unset: "the system's resolvers",
    blankIsUnset: true,
    description:
      "DNS servers for team domain verification, comma-separated `ip` or `ip:port` (`[ipv6]:port`), e.g. `1.1.1.1,8.8.8.8:53`."
  }),
  dnsTimeoutMs: Env.integer("HERALD_DNS_TIMEOUT_MS", {
    default: 5000,
    min: 1,
    description: "How long one domain-verification TXT lookup may take, in milliseconds."
  })
}

/** The address part of an `ip`, `ip:port` or `[ipv6]:port` entry, undefined when it has none. */
const hostOf = (entry: string): string | undefined => {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry)
  if (bracketed !== null) return bracketed[1]
  if (isIP(entry) !== 0) return entry
  const withPort = /^([^:]+):(\d{1,5})$/.exec(entry)
  return withPort !== null ? withPort[1] : undefined
}

/** The entries of `HERALD_DNS_SERVERS`, each an IP address with an optional port (a host name is refused). */
export const parseDnsServers = (value: string): Effect.Effect<ReadonlyArray<string>, Config.ConfigError> => {
  const entries = value.split(",").map((s) => s.trim()).filter((s) => s !== "")
  const bad = entries.find((entry) => {
    const host = hostOf(entry)
    return host === undefined || isIP(host) === 0
  })
  return bad === undefined
    ? Effect.succeed(entries)
    : Effect.fail(Env.configError(`HERALD_DNS_SERVERS must list IP addresses as ip or ip:port, comma-separated; not ${JSON.stringify(bad)}`))
}

export const domainConfig: Config.Config<DomainConfigShape> = Env.configOf(domainVariables).pipe(
  Config.mapEffect((c) =>
    Effect.map(Option.match(c.dnsServers, { onNone: () => Effect.succeed([]), onSome: parseDnsServers }), (dnsServers) => ({
      dnsServers,
      dnsTimeout: Duration.millis(c.dnsTimeoutMs)
    }))
  )
)

export class DomainConfig extends Context.Service<DomainConfig, DomainConfigShape>()("herald/DomainConfig") {
  static readonly layer = Layer.effect(DomainConfig, domainConfig)
}
