/**
 * The `herald` executable's answers to a person at a terminal: a bare
 * `herald` prints its help and exits 0; a usage error (unknown command or
 * flag, a missing flag) says why on stderr and exits 2; `serve` on a busy port
 * names the address in use and exits 1.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as net from "node:net"
import { embeddedClientLayer, postgresLayer } from "../../packages/server/src/db/Database.ts"
import { serveEmbedded } from "../../packages/server/src/db/Embedded.ts"
import { childDatabase } from "../support/database.ts"
import type { TestDatabase } from "../support/database.ts"
import { cli, cliJson, freePort } from "../support/process.ts"

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

/** The child's database, opened here once the command has exited. */
const openDatabase = (database: TestDatabase) =>
  database.kind === "postgres"
    ? postgresLayer(Redacted.make(database.env.DATABASE_URL!), 1)
    : Layer.unwrap(Effect.map(Effect.orDie(serveEmbedded(database.env.HERALD_DATA_DIR!)), embeddedClientLayer))

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

  it.effect("admin team create makes a workplace team owned by the named person, logged as the operator", () =>
    Effect.gen(function*() {
      const database = yield* childDatabase
      const person = yield* cliJson<{ id: string }>(["admin", "user", "create", "--email", "boss@example.test", "--name", "Boss"], database.env)
      const team = yield* cliJson<Record<string, unknown>>(["admin", "team", "create", "--name", "Acme", "--owner", "boss@example.test"], database.env)
      assert.match(String(team.id), /^team_/)
      assert.deepStrictEqual([team.kind, team.plan, team.name, team.role, team.memberCount], ["team", "team", "Acme", "owner", 1])
      assert.deepStrictEqual(team.seats, { used: 1, available: null, billable: 1 })
      // By id too; an unknown owner creates nothing.
      const byId = yield* cliJson<{ id: string }>(["admin", "team", "create", "--name", "Beta", "--owner", person.id], database.env)
      const unknown = yield* cli(["admin", "team", "create", "--name", "Gamma", "--owner", "nobody@example.test"], database.env)
      assert.notStrictEqual(unknown.code, 0)

      const stored = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const members = yield* sql<{ teamId: string; userId: string; role: string }>`
          SELECT team_id, user_id, role FROM team_members ORDER BY team_id`
        const audit = yield* sql<{ teamId: string; action: string; actorUserId: string | null; userAgent: string | null }>`
          SELECT team_id, action, actor_user_id, user_agent FROM team_audit ORDER BY team_id`
        const [teams] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM teams`
        return { members, audit, teams: teams!.n }
      }).pipe(Effect.provide(openDatabase(database)), Effect.scoped, Effect.orDie)
      assert.strictEqual(stored.teams, 2)
      assert.sameDeepMembers(stored.members.map((m) => ({ ...m })), [
        { teamId: String(team.id), userId: person.id, role: "owner" },
        { teamId: byId.id, userId: person.id, role: "owner" }
      ])
      assert.sameDeepMembers(stored.audit.map((a) => ({ ...a })), [
        { teamId: String(team.id), action: "team.created", actorUserId: null, userAgent: "herald admin" },
        { teamId: byId.id, action: "team.created", actorUserId: null, userAgent: "herald admin" }
      ])
    }), { timeout: 120_000 })

  it.effect("admin keys rotate prints a new current Ed25519 key and retires the one before", () =>
    Effect.gen(function*() {
      const database = yield* childDatabase
      type Key = { keyId: string; algorithm: string; publicKey: string; createdAt: string; retiredAt: string | null }
      const first = yield* cliJson<Key>(["admin", "keys", "rotate"], database.env)
      const second = yield* cliJson<Key>(["admin", "keys", "rotate"], database.env)
      for (const key of [first, second]) {
        assert.strictEqual(key.algorithm, "Ed25519")
        assert.isNull(key.retiredAt)
        // base64url of a raw 32-byte key.
        assert.strictEqual(Buffer.from(key.publicKey, "base64url").byteLength, 32)
      }
      assert.notStrictEqual(first.keyId, second.keyId)
      const keys = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ keyId: string; retired: boolean }>`
          SELECT key_id, retired_at IS NOT NULL AS retired FROM mini_app_keys ORDER BY created_at`
      }).pipe(Effect.provide(openDatabase(database)), Effect.scoped, Effect.orDie)
      assert.deepStrictEqual(keys.map((k) => ({ ...k })), [
        { keyId: first.keyId, retired: true },
        { keyId: second.keyId, retired: false }
      ])
    }), { timeout: 120_000 })
})
