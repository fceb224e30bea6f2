/**
 * What the tests that start real `herald serve` processes share: the typed
 * clients of a process, polling until an observable state holds, and the
 * test's own connection to the processes' database (to make a stored timer
 * due while no server runs, or to make a person as `herald admin` would).
 */
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../packages/server/src/config/AppConfig.ts"
import { cliDatabaseLayer } from "../../packages/server/src/db/Database.ts"
import { Identity } from "../../packages/server/src/identity/Identity.ts"

/** The Person API client of a process, signed in with `session`. */
export const personClient = (baseUrl: string, session: string) =>
  Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 }))

/** The Agent API client of a process, with `token`. */
export const agentClient = (baseUrl: string, token: string) =>
  Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))

/** Polls `read` every `everyMillis` (50) until `check` holds, for at most `seconds`; dies naming `what` otherwise. */
export const within = <A, E, R>(
  seconds: number,
  read: Effect.Effect<A, E, R>,
  check: (a: A) => boolean,
  what: string,
  everyMillis = 50
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    for (;;) {
      const value = yield* read
      if (check(value)) return value
      if (Date.now() > deadline) return yield* Effect.die(new Error(`${what}: not reached within ${seconds} s`))
      yield* Effect.sleep(Duration.millis(everyMillis))
    }
  })

/** Runs effects on the database of the processes started with `env`, through a connection of the test's own. */
export const onDatabaseOf = (env: Record<string, string>) => {
  const layer = cliDatabaseLayer.pipe(
    Layer.provide(AppConfig.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
  )
  return <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | Scope.Scope>) =>
    Effect.scoped(effect.pipe(Effect.provide(layer))).pipe(Effect.orDie)
}

/**
 * A person and a Person API session on the database of `env`, made as `herald admin user create` and
 * `admin session create` make them (Identity on the CLI's database layer) but without two CLI processes:
 * for tests where the person is set-up, not what is tested (the CLI's own tests run the commands).
 */
export const personOn = (env: Record<string, string>, person: { readonly email: string; readonly name: string }) =>
  onDatabaseOf(env)(Effect.gen(function*() {
    const identity = yield* Identity
    const created = yield* identity.createUser({ email: person.email, name: person.name })
    const { token } = yield* identity.createSession(created.id)
    return { id: created.id, session: token }
  }).pipe(Effect.provide(Identity.layer), Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))))

/**
 * How many pushes to `deviceIds` are still queued on the database of `env`. Once the expected alerts are
 * in and none is queued, nothing more is on its way: a repeated push would sit in the queue behind them.
 */
export const pushesQueued = (env: Record<string, string>, deviceIds: ReadonlyArray<string>) =>
  onDatabaseOf(env)(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM push_queue WHERE ${sql.in("device_id", deviceIds)}`
    return rows[0]!.n
  }))
