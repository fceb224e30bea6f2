/**
 * The credentials this node authenticated, by the hash of their secret, so a
 * request whose token was seen in the last `entryTtl` needs no database read.
 * One credential may have several cached hashes (a grant's access tokens), so
 * entries are also indexed by credential id, which revocation evicts by.
 *
 * A plain bounded map rather than Effect's `Cache`: a hit must be one
 * synchronous step on the hot path, and eviction goes by id, not by key.
 * Over `maxEntries`, the oldest tenth is dropped (maps iterate in insertion
 * order).
 */
import { Context, Duration, Effect, Layer } from "effect"
import type { CredentialRow } from "./CredentialsRepo.ts"

export interface CachedCredential {
  readonly row: CredentialRow
  readonly expiresAtMs: number
  readonly loadedAt: number
}

export interface CredentialCacheOptions {
  /** Entries are re-read after this long even without a revocation (they are cheap). */
  readonly entryTtl: Duration.Input
  readonly maxEntries: number
}

export class CredentialCache extends Context.Service<CredentialCache, {
  /** The entry of `hash` loaded less than `entryTtl` before `now`. */
  readonly fresh: (hash: string, now: number) => CachedCredential | undefined
  /** Caches `row` under `hash` as loaded at `now`, and returns its entry. */
  readonly remember: (hash: string, row: CredentialRow, now: number) => CachedCredential
  /** Any cached entry of the credential `id`. */
  readonly entryOf: (id: string) => CachedCredential | undefined
  /** Drops every hash of the credential `id`. */
  readonly evict: (id: string) => void
}>()("herald/CredentialCache") {
  static readonly make = (options: CredentialCacheOptions) => {
    const entries = new Map<string, CachedCredential>() // by hash
    const hashById = new Map<string, Set<string>>()
    const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(options.entryTtl))

    const forgetHash = (id: string, hash: string) => {
      const hashes = hashById.get(id)
      if (hashes === undefined) return
      hashes.delete(hash)
      if (hashes.size === 0) hashById.delete(id)
    }

    const remember = (hash: string, row: CredentialRow, now: number): CachedCredential => {
      if (entries.size >= options.maxEntries) {
        let drop = Math.ceil(options.maxEntries / 10)
        for (const [h, e] of entries) {
          entries.delete(h)
          forgetHash(e.row.id, h)
          if (--drop === 0) break
        }
      }
      const entry = {
        row,
        expiresAtMs: row.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(row.expiresAt),
        loadedAt: now
      }
      entries.set(hash, entry)
      const hashes = hashById.get(row.id) ?? new Set<string>()
      hashes.add(hash)
      hashById.set(row.id, hashes)
      return entry
    }

    return CredentialCache.of({
      fresh: (hash, now) => {
        const cached = entries.get(hash)
        return cached !== undefined && now - cached.loadedAt < ttlMs ? cached : undefined
      },
      remember,
      entryOf: (id) => {
        const hashes = hashById.get(id)
        if (hashes === undefined) return undefined
        for (const hash of hashes) {
          const entry = entries.get(hash)
          if (entry !== undefined) return entry
        }
        return undefined
      },
      evict: (id) => {
        const hashes = hashById.get(id)
        if (hashes === undefined) return
        for (const hash of hashes) entries.delete(hash)
        hashById.delete(id)
      }
    })
  }

  static readonly layerWith = (options: CredentialCacheOptions) =>
    Layer.effect(CredentialCache, Effect.sync(() => CredentialCache.make(options)))
}
