/**
 * TXT lookups for domain verification, through `node:dns`'s `Resolver` (a
 * real query to real DNS servers, not the system's `getaddrinfo`), pointed at
 * `HERALD_DNS_SERVERS` when set. One try per lookup, bounded by
 * `HERALD_DNS_TIMEOUT_MS` (c-ares' own timeout, with an outer bound in case
 * it overruns); an interrupted lookup is cancelled.
 *
 * Outcomes are values, not errors: the caller tells "the name answers but
 * not with the challenge" (a fact about the domain, not remembered) from "the
 * resolver failed" (remembered a while, so a broken resolver is not hammered).
 */
import { Context, Duration, Effect, Layer } from "effect"
import { Resolver } from "node:dns/promises"
import { DomainConfig } from "../config/DomainConfig.ts"

export type TxtLookup =
  /** The name's TXT records, each record's strings joined. */
  | { readonly _tag: "Found"; readonly values: ReadonlyArray<string> }
  /** The name exists but has no TXT record (NODATA). */
  | { readonly _tag: "NoRecords" }
  /** No such name (NXDOMAIN). */
  | { readonly _tag: "NoSuchName" }
  /** The resolver failed: `code` is c-ares' (`ETIMEOUT`, `ESERVFAIL`, `EREFUSED`, `ECONNREFUSED`, …). */
  | { readonly _tag: "Failed"; readonly code: string }

const codeOf = (error: unknown): string => {
  const code = (error as { readonly code?: unknown } | null)?.code
  return typeof code === "string" ? code : "EUNKNOWN"
}

export class DnsTxt extends Context.Service<DnsTxt, {
  readonly lookup: (name: string) => Effect.Effect<TxtLookup>
}>()("herald/DnsTxt") {
  static readonly layerNoDeps = Layer.effect(DnsTxt, Effect.gen(function*() {
    const config = yield* DomainConfig
    const timeoutMs = Duration.toMillis(config.dnsTimeout)
    // Checked once at start: setServers throws on an entry it cannot take.
    yield* Effect.try({
      try: () => new Resolver().setServers([...config.dnsServers]),
      catch: (e) => new Error(`HERALD_DNS_SERVERS: ${String(e)}`)
    }).pipe(Effect.orDie)

    const lookup = (name: string) =>
      Effect.suspend(() => {
        // A resolver per lookup, so cancelling one (on interruption) cancels nothing else.
        const resolver = new Resolver({ timeout: timeoutMs, tries: 1 })
        if (config.dnsServers.length > 0) resolver.setServers([...config.dnsServers])
        return Effect.tryPromise({
          try: () => resolver.resolveTxt(name),
          catch: codeOf
        }).pipe(
          Effect.onInterrupt(() => Effect.sync(() => resolver.cancel())),
          Effect.map((records): TxtLookup => ({ _tag: "Found", values: records.map((chunks) => chunks.join("")) })),
          Effect.catch((code): Effect.Effect<TxtLookup> =>
            Effect.succeed(
              code === "ENODATA"
                ? { _tag: "NoRecords" }
                : code === "ENOTFOUND"
                ? { _tag: "NoSuchName" }
                : { _tag: "Failed", code }
            )
          ),
          Effect.timeoutOrElse({
            duration: Duration.millis(timeoutMs + 1000),
            orElse: () => Effect.succeed<TxtLookup>({ _tag: "Failed", code: "ETIMEOUT" })
          })
        )
      }).pipe(Effect.withSpan("DnsTxt.lookup", { attributes: { name } }))

    return DnsTxt.of({ lookup })
  }))

  static readonly layer = DnsTxt.layerNoDeps.pipe(Layer.provide(DomainConfig.layer))
}
