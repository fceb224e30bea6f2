/**
 * The `herald` executable's answers to a person at a terminal: a bare
 * `herald` prints its help and exits 0; a usage error (unknown command or
 * flag, a missing flag) says why on stderr and exits 2; `serve` on a busy port
 * names the address in use and exits 1.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as net from "node:net"
import { childDatabase } from "../support/database.ts"
import { cli, freePort } from "../support/process.ts"

/** A listener holding a port for the test's scope. */
const occupy = (port: number) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<net.Server>((resolve, reject) => {
        const server = net.createServer()
        server.once("error", reject)
        server.listen(port, "127.0.0.1", () => resolve(server))
      })),
    (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

describe("herald CLI", () => {
  it.effect("a bare herald prints its help and exits 0", () =>
    Effect.gen(function*() {
      const result = yield* cli([], {})
      assert.strictEqual(result.code, 0)
      assert.include(result.stdout, "USAGE")
      assert.include(result.stdout, "serve")
      assert.notInclude(result.stderr, "Help requested")
    }), { timeout: 120_000 })

  it.effect("usage errors exit 2 with the reason on stderr", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["--bogus"], "Unrecognized flag: --bogus"],
        [["nope"], "Unknown subcommand \"nope\""],
        [["admin", "user", "create", "--email", "a@example.test"], "Missing required flag: --name"]
      ]
      for (const [args, reason] of cases) {
        const result = yield* cli(args, {})
        assert.strictEqual(result.code, 2, args.join(" "))
        assert.include(result.stderr, reason)
        assert.notInclude(result.stderr, "Help requested")
      }
    }), { timeout: 120_000 })

  it.effect("serve on a busy port says which address is in use and exits 1", () =>
    Effect.gen(function*() {
      const database = yield* childDatabase
      const port = yield* freePort
      yield* occupy(port)
      const result = yield* cli(["serve"], { ...database.env, PORT: String(port), HOST: "127.0.0.1" })
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, `herald: 127.0.0.1:${port} is already in use (EADDRINUSE); set PORT or HOST`)
      assert.notInclude(result.stderr, "herald: ServeError")
    }), { timeout: 120_000 })
})
