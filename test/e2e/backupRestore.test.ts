/**
 * docs/operations.md's backups, run as an operator runs them. PostgreSQL: `pg_dump -Fc` while the server
 * runs, `pg_restore --no-owner --exit-on-error` into an empty database. Embedded: the stopped server's data
 * directory as a tar, unpacked elsewhere. A server started on the restored copy still knows the person's
 * session and token, and still verifies an inbox cursor signed before the backup: the keys Herald made
 * itself (`server_secrets`) came back with the rest.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { childDatabase, emptyPostgres, tempDir } from "../support/database.ts"
import { startServer, stopServer } from "../support/process.ts"
import { agentClient, personClient, personOn } from "../support/serverClients.ts"

/** A command of the docs, to completion; dies with its output when it fails. */
const run = (command: string, args: ReadonlyArray<string>) =>
  Effect.callback<void>((resume) => {
    execFile(command, args, (error, stdout, stderr) =>
      resume(error === null ? Effect.void : Effect.die(new Error(`${command} ${args.join(" ")}: ${error.message}\n${stdout}${stderr}`))))
  })

describe("backups and restore (docs/operations.md)", () => {
  it.live("a restored backup serves the person's session, token and inbox cursor made before it", () =>
    Effect.scoped(Effect.gen(function*() {
      const database = yield* childDatabase
      const server = yield* startServer(database.env)
      const { id, session } = yield* personOn(database.env, { email: "ada@example.test", name: "Ada Lovelace" })
      const app = yield* personClient(server.baseUrl, session)
      const { secret } = yield* app.tokens.create({ payload: { name: "backup", scopes: ["notifications:send", "inbox:read"] } })
      const agent = yield* agentClient(server.baseUrl, secret)
      for (const title of ["First", "Second"]) yield* agent.notifications.create({ payload: { title, body: title } })
      const page = yield* agent.inbox.list({ query: { limit: 1 } })
      assert.isDefined(page.nextCursor)

      const dir = yield* tempDir("backup")
      let restored: Record<string, string>
      if (database.kind === "postgres") {
        const dump = path.join(dir, "herald.dump")
        yield* run("pg_dump", ["-Fc", "-d", database.env.DATABASE_URL!, "-f", dump])
        yield* stopServer(server)
        const empty = yield* emptyPostgres
        yield* run("pg_restore", ["--no-owner", "--exit-on-error", "-d", empty, dump])
        restored = { DATABASE_URL: empty }
      } else {
        yield* stopServer(server)
        const data = database.env.HERALD_DATA_DIR!
        const archive = path.join(dir, "herald-data.tar.gz")
        yield* run("tar", ["-C", path.dirname(data), "-czf", archive, path.basename(data)])
        const into = path.join(dir, "restored")
        fs.mkdirSync(into)
        yield* run("tar", ["-C", into, "-xzf", archive])
        restored = { HERALD_DATA_DIR: path.join(into, path.basename(data)) }
      }

      const again = yield* startServer(restored)
      const me = yield* (yield* personClient(again.baseUrl, session)).me.get()
      assert.deepStrictEqual([me.id, me.email], [id, "ada@example.test"])
      const rest = yield* (yield* agentClient(again.baseUrl, secret)).inbox.list({ query: { cursor: page.nextCursor! } })
      assert.deepStrictEqual(rest.items.map((i) => i.title), ["First"])
    })))
})
