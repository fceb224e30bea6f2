/**
 * LOG_LEVEL in any case of a level's name: `LOG_LEVEL=warn` used to stop the
 * server with a schema error, since only the exact spelling `Warn` was taken.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { childDatabase } from "../../../../test/support/database.ts"
import { cli, startServer, stopServer } from "../../../../test/support/process.ts"
import { appConfig } from "../../src/config/AppConfig.ts"

const levelOf = (env: Record<string, string>) =>
  Effect.map(appConfig.parse(ConfigProvider.fromUnknown(env)), (c) => c.logLevel)

describe("LOG_LEVEL", () => {
  it.effect("takes any case of a level's name, and `warning` for Warn", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<[string, string]> = [
        ["warn", "Warn"], ["WARN", "Warn"], ["Warn", "Warn"], ["warning", "Warn"], ["WARNING", "Warn"],
        ["debug", "Debug"], ["TRACE", "Trace"], ["info", "Info"], ["error", "Error"], ["fatal", "Fatal"],
        ["none", "None"], ["all", "All"], [" Debug ", "Debug"]
      ]
      for (const [value, level] of cases) assert.strictEqual(yield* levelOf({ LOG_LEVEL: value }), level, value)
      assert.strictEqual(yield* levelOf({}), "Info")
    }))

  it.effect("refuses an unknown level, listing the valid names", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(levelOf({ LOG_LEVEL: "loud" }))
      assert.isTrue(Exit.isFailure(exit))
      const message = String(Exit.isFailure(exit) ? exit.cause : "")
      assert.include(message, "LOG_LEVEL must be one of All, Fatal, Error, Warn, Info, Debug, Trace, None")
      assert.include(message, "\"loud\"")
    }))

  it.live("`herald serve` starts with LOG_LEVEL=warn, and `herald migrate` with LOG_LEVEL=DEBUG", () =>
    Effect.scoped(Effect.gen(function*() {
      // The machine's PostgreSQL when the suite has one (a fresh database), else an embedded one.
      const db = yield* childDatabase
      const server = yield* startServer({ ...db.env, LOG_LEVEL: "warn" })
      const ready = yield* Effect.promise(() => fetch(`${server.baseUrl}/readyz`))
      assert.strictEqual(ready.status, 200)
      // Warn hides the Info start-up line.
      assert.notInclude(server.output(), "herald listening on")
      yield* stopServer(server)
      const migrate = yield* cli(["migrate"], { ...db.env, LOG_LEVEL: "DEBUG" })
      assert.strictEqual(migrate.code, 0, migrate.stderr)
      const refused = yield* cli(["migrate"], { ...db.env, LOG_LEVEL: "loud" })
      assert.notStrictEqual(refused.code, 0)
      assert.include(refused.stderr, "LOG_LEVEL must be one of")
    })), { timeout: 120_000 })
})
