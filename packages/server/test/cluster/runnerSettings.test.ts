/**
 * What an operator sees of the runner settings (config/ClusterConfig.ts,
 * cluster/Runner.ts): `HERALD_RUNNER_ADDRESS` and `HERALD_RUNNER_LISTEN_ADDRESS`
 * as `host:port`, a malformed or unusable value refused at start with a
 * message naming the variable, the runner's address in the start-up log, and
 * on the embedded database one process only, said plainly to a second
 * `herald serve`.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Option } from "effect"
import { clusterConfig } from "../../src/config/ClusterConfig.ts"
import { childDatabase, embeddedDataCopy, usingPostgres } from "../../../../test/support/database.ts"
import { cli, freePort, startServer } from "../../../../test/support/process.ts"

const parse = (env: Record<string, string>) => clusterConfig.parse(ConfigProvider.fromUnknown(env))

const refusal = (env: Record<string, string>) =>
  Effect.map(Effect.exit(parse(env)), (exit) => {
    assert.isTrue(Exit.isFailure(exit), JSON.stringify(env))
    return String(Exit.isFailure(exit) ? exit.cause : "")
  })

describe("runner settings", () => {
  it.effect("take host:port, [ipv6]:port and blank for unset; the listen address alone is also where others connect", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* parse({}), { address: Option.none(), listenAddress: Option.none() })
      assert.deepStrictEqual(yield* parse({ HERALD_RUNNER_ADDRESS: "  " }), { address: Option.none(), listenAddress: Option.none() })
      assert.deepStrictEqual(yield* parse({ HERALD_RUNNER_ADDRESS: " 10.0.0.5:34431 " }), {
        address: Option.some({ host: "10.0.0.5", port: 34431 }),
        listenAddress: Option.none()
      })
      assert.deepStrictEqual(yield* parse({ HERALD_RUNNER_ADDRESS: "herald-2.internal:34431", HERALD_RUNNER_LISTEN_ADDRESS: "0.0.0.0:34431" }), {
        address: Option.some({ host: "herald-2.internal", port: 34431 }),
        listenAddress: Option.some({ host: "0.0.0.0", port: 34431 })
      })
      assert.deepStrictEqual(yield* parse({ HERALD_RUNNER_ADDRESS: "[fd00::5]:0" }), {
        address: Option.some({ host: "fd00::5", port: 0 }),
        listenAddress: Option.none()
      })
      assert.deepStrictEqual(yield* parse({ HERALD_RUNNER_LISTEN_ADDRESS: "10.0.0.5:34431" }), {
        address: Option.some({ host: "10.0.0.5", port: 34431 }),
        listenAddress: Option.some({ host: "10.0.0.5", port: 34431 })
      })
    }))

  it.effect("refuse anything else with a message naming the variable and the value", () =>
    Effect.gen(function*() {
      for (const value of ["34431", "10.0.0.5", "10.0.0.5:", "10.0.0.5:65536", "fd00::5:34431", "http://10.0.0.5:34431", "a b:1"]) {
        const message = yield* refusal({ HERALD_RUNNER_ADDRESS: value })
        assert.include(message, "HERALD_RUNNER_ADDRESS must be host:port (for example 10.0.0.5:34431 or [fd00::5]:34431)", value)
        assert.include(message, JSON.stringify(value))
      }
      assert.include(yield* refusal({ HERALD_RUNNER_LISTEN_ADDRESS: "nowhere" }), "HERALD_RUNNER_LISTEN_ADDRESS must be host:port")
      assert.include(
        yield* refusal({ HERALD_RUNNER_ADDRESS: "0.0.0.0:34431" }),
        "HERALD_RUNNER_ADDRESS is where the other nodes connect, not an interface to listen on (0.0.0.0:34431)"
      )
      assert.include(
        yield* refusal({ HERALD_RUNNER_LISTEN_ADDRESS: "0.0.0.0:34431" }),
        "HERALD_RUNNER_LISTEN_ADDRESS listens on every interface (0.0.0.0:34431): set HERALD_RUNNER_ADDRESS"
      )
    }))

  it.live("`herald serve` stops at start on a malformed address, saying which variable", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* childDatabase
      const result = yield* cli(["serve"], { ...db.env, PORT: String(yield* freePort), HERALD_RUNNER_ADDRESS: "10.0.0.5" })
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "herald: HERALD_RUNNER_ADDRESS must be host:port")
      assert.notInclude(result.stderr, "SchemaError")
    })), { timeout: 120_000 })
})

describe.runIf(usingPostgres)("runner addresses on PostgreSQL", () => {
  it.live("the start-up log says where the runner is reached; a taken port stops the next one with what to set", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* childDatabase
      const unset = yield* startServer(db.env)
      assert.match(unset.output(), /runner 127\.0\.0\.1:\d+, alone; set HERALD_RUNNER_ADDRESS on every node to run several/)

      const port = yield* freePort
      const fixed = yield* startServer({ ...db.env, HERALD_RUNNER_ADDRESS: `127.0.0.1:${port}` })
      assert.include(fixed.output(), `runner 127.0.0.1:${port}`)
      assert.notInclude(fixed.output(), `runner 127.0.0.1:${port};`)

      const taken = yield* cli(["serve"], { ...db.env, PORT: String(yield* freePort), HERALD_RUNNER_ADDRESS: `127.0.0.1:${port}` })
      assert.strictEqual(taken.code, 1)
      assert.include(
        taken.stderr,
        `herald: cannot listen for the other cluster runners on 127.0.0.1:${port} (EADDRINUSE); set HERALD_RUNNER_ADDRESS`
      )
    })), { timeout: 120_000 })
})

describe("the embedded database", () => {
  it.live("serves one process: a second `herald serve` on its data directory says so and exits 1", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* embeddedDataCopy("one-process")
      const first = yield* startServer({ HERALD_DATA_DIR: dir, HERALD_RUNNER_ADDRESS: "127.0.0.1:34431" })
      assert.include(first.output(), "HERALD_RUNNER_ADDRESS is ignored: the embedded database is served by this one process")
      const second = yield* cli(["serve"], { HERALD_DATA_DIR: dir, PORT: String(yield* freePort) })
      assert.strictEqual(second.code, 1)
      assert.include(second.stderr, `herald: another Herald process is serving the embedded database in ${dir}`)
      // The first goes on serving.
      assert.strictEqual((yield* Effect.promise(() => fetch(`${first.baseUrl}/readyz`))).status, 200)
    })), { timeout: 120_000 })
})
