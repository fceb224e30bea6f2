/**
 * The credential cache, driven by TestClock: expiry checked in memory,
 * revocations made elsewhere (straight in the database, as another node or
 * the CLI would) evicted within the poll interval, and `lastUsedAt` written
 * at most once per credential per minute.
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { Credentials } from "../../src/auth/Credentials.ts"
import type { CredentialsOptions } from "../../src/auth/Credentials.ts"
import { generateSecret, hashSecret, isWellFormed } from "../../src/auth/Secrets.ts"
import { MigrationsLayer } from "../../src/db/Migrations.ts"
import { IdentityRepo } from "../../src/identity/IdentityRepo.ts"
import { seedToken } from "./seedToken.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { CredentialsWorkers } from "../../src/runtime/Workers.ts"

const DbLayer = IdentityRepo.layer.pipe(Layer.provideMerge(MigrationsLayer), Layer.provideMerge(TestSqlLayer))

const options = {
  revocationPollInterval: "250 millis",
  flushInterval: "10 seconds",
  writeEvery: "1 minute",
  entryTtl: "10 minutes",
  maxEntries: 1000
} as const
// Background loops do real I/O on every tick: where a test moves the clock by
// minutes, the loops it does not exercise tick rarely.
const quietPoll = { ...options, revocationPollInterval: "1 day" } as const
const quietAll = { ...quietPoll, flushInterval: "1 day" } as const

/** The cache with its workers (revocation poll, lastUsedAt flush), as `herald serve` runs it. */
const withWorkers = (opts: CredentialsOptions) => CredentialsWorkers.pipe(Layer.provideMerge(Credentials.layerWith(opts)))


/**
 * An OAuth grant (an api_tokens row of kind `oauth`) and `count` access tokens
 * of it, each with its own scopes and expiry, written straight in the database.
 */
const seedGrant = (count: number, accessExpiresAt: string) =>
  Effect.gen(function*() {
    const { userId, token } = yield* seedToken()
    const sql = yield* SqlClient.SqlClient
    const clientId = yield* makeId("ocl")
    yield* sql`INSERT INTO oauth_clients (id, name) VALUES (${clientId}, 'Remote Tool')`
    yield* sql`UPDATE api_tokens SET kind = 'oauth', oauth_client_id = ${clientId}, scopes = ARRAY['devices:read', 'inbox:read']
               WHERE id = ${token.id}`
    const secrets: Array<string> = []
    for (let i = 0; i < count; i++) {
      const secret = generateSecret("hlo")
      yield* sql`INSERT INTO oauth_access_tokens (token_hash, token_id, scopes, expires_at)
                 VALUES (${hashSecret(secret)}, ${token.id}, ARRAY['inbox:read'], ${accessExpiresAt})`
      secrets.push(secret)
    }
    return { userId, grantId: token.id, secrets }
  }).pipe(Effect.orDie)

const lastUsedInDb = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ lastUsedAt: string | null }>`SELECT last_used_at FROM api_tokens WHERE id = ${id}`).pipe(
      Effect.map((rows) => rows[0]?.lastUsedAt ?? null),
      Effect.orDie
    )

/** A database write made by a background fiber lands in real time: poll for it (bounded). */
const eventually = <A, R>(read: Effect.Effect<A, never, R>, expected: A) =>
  read.pipe(
    Effect.flatMap((value) => value === expected ? Effect.succeed(value) : Effect.fail(value)),
    Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 40 }),
    Effect.catch((value) => Effect.succeed(value)),
    TestClock.withLive
  )

layer(DbLayer, { excludeTestServices: true, timeout: "120 seconds" })("Credentials", (it) => {
  it.effect("secrets are well-formed, checksummed and typed", () =>
    Effect.sync(() => {
      const secret = generateSecret("hld")
      assert.isTrue(isWellFormed(secret, "hld"))
      assert.isFalse(isWellFormed(secret, "hls"))
      assert.isFalse(isWellFormed(secret.slice(0, -1) + (secret.endsWith("0") ? "1" : "0"), "hld"))
      assert.isFalse(isWellFormed(secret + "x", "hld"))
      assert.notStrictEqual(generateSecret("hld"), secret)
      assert.match(hashSecret(secret), /^[0-9a-f]{64}$/)
    }))

  it.effect("expiry is checked in memory against the Clock", () =>
    Effect.gen(function*() {
      // Times are relative to the test clock's start; the background loops
      // keep their schedules because the clock only moves forward in steps.
      const start = yield* Clock.currentTimeMillis
      const expiresAt = new Date(start + 3_600_000).toISOString()
      const { secret } = yield* seedToken({ expiresAt })
      const credentials = yield* Credentials
      const ok = yield* credentials.authenticateToken(secret)
      assert.strictEqual(ok.expiresAt, expiresAt)
      yield* TestClock.adjust("59 minutes")
      yield* credentials.authenticateToken(secret)
      yield* TestClock.adjust("1 minute")
      const expired = yield* Effect.flip(credentials.authenticateToken(secret))
      assert.strictEqual(expired._tag, "Unauthorized")
      assert.include(expired.error, "Expired")
    }).pipe(Effect.provide(withWorkers(quietAll)), Effect.provide(TestClock.layer())))

  it.effect("a revocation made elsewhere is seen at the next poll", () =>
    Effect.gen(function*() {
      const { secret, token } = yield* seedToken()
      const credentials = yield* Credentials
      yield* credentials.authenticateToken(secret)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE api_tokens SET revoked_at = now() WHERE id = ${token.id}`.pipe(Effect.orDie)
      // Still cached until the poller runs...
      yield* credentials.authenticateToken(secret)
      yield* TestClock.adjust("250 millis")
      // ...the poll itself is real I/O: wait (in real time, bounded) for it to land.
      const refused = yield* credentials.authenticateToken(secret).pipe(
        Effect.flip,
        Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 40 }),
        TestClock.withLive
      )
      assert.strictEqual(refused._tag, "Unauthorized")
    }).pipe(Effect.provide(withWorkers(options)), Effect.provide(TestClock.layer())))

  it.effect("lastUsedAt is written at most once a minute per token", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const at = (seconds: number) => new Date(start + seconds * 1000).toISOString()
      const { secret, token } = yield* seedToken()
      const credentials = yield* Credentials
      const first = yield* credentials.authenticateToken(secret)
      assert.strictEqual(first.lastUsedAt, at(0))
      assert.isNull(yield* lastUsedInDb(token.id))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* eventually(lastUsedInDb(token.id), at(0)), at(0))
      // Used again 20 s later: memory is fresh, the database is not written yet.
      yield* TestClock.adjust("10 seconds")
      const second = yield* credentials.authenticateToken(secret)
      assert.strictEqual(second.lastUsedAt, at(20))
      yield* TestClock.adjust("10 seconds")
      yield* TestClock.withLive(Effect.sleep("200 millis"))
      assert.strictEqual(yield* lastUsedInDb(token.id), at(0))
      // A minute after the first write, the newest use is written.
      yield* TestClock.adjust("40 seconds")
      assert.strictEqual(yield* eventually(lastUsedInDb(token.id), at(20)), at(20))
    }).pipe(Effect.provide(withWorkers(quietPoll)), Effect.provide(TestClock.layer())))

  it.effect("an OAuth access token authenticates as its grant, with its own scopes and expiry", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const expiresAt = new Date(start + 3_600_000).toISOString()
      const { grantId, userId, secrets } = yield* seedGrant(1, expiresAt)
      const credentials = yield* Credentials
      const grant = yield* credentials.authenticateToken(secrets[0]!)
      assert.strictEqual(grant.id, grantId)
      assert.strictEqual(grant.userId, userId)
      assert.deepStrictEqual(grant.scopes, ["inbox:read"])
      assert.strictEqual(Date.parse(grant.expiresAt!), Date.parse(expiresAt))
      // A mangled access token is refused by its checksum, without a lookup.
      const secret = secrets[0]!
      const mangled = yield* Effect.flip(credentials.authenticateToken(secret.slice(0, -1) + (secret.endsWith("0") ? "1" : "0")))
      assert.include(mangled.error, "Malformed")
      yield* TestClock.adjust("60 minutes")
      const expired = yield* Effect.flip(credentials.authenticateToken(secrets[0]!))
      assert.include(expired.error, "Expired")
    }).pipe(Effect.provide(withWorkers(quietAll)), Effect.provide(TestClock.layer())))

  it.effect("revoking a grant evicts every cached access token of it", () =>
    Effect.gen(function*() {
      const { grantId, secrets } = yield* seedGrant(2, new Date(Date.now() + 86_400_000).toISOString())
      const credentials = yield* Credentials
      for (const secret of secrets) yield* credentials.authenticateToken(secret)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE api_tokens SET revoked_at = now() WHERE id = ${grantId}`.pipe(Effect.orDie)
      credentials.evict(grantId)
      for (const secret of secrets) {
        const refused = yield* Effect.flip(credentials.authenticateToken(secret))
        assert.include(refused.error, "revoked")
      }
    }).pipe(Effect.provide(withWorkers(quietAll))))
})
