/** `herald migrate`: apply pending migrations and exit (safe while a server runs). */
import { Console, Effect } from "effect"
import { Command } from "effect/cli"

export const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    // Loaded when the command runs, so the rest of the CLI starts without the database's modules.
    const [{ runMigrations }, { cliDatabaseLayerRaw }] = yield* Effect.promise(() =>
      Promise.all([import("@herald/server/db/Migrations"), import("./database.ts")])
    )
    const applied = yield* runMigrations.pipe(Effect.provide(cliDatabaseLayerRaw))
    yield* Console.log(JSON.stringify({ applied: applied.map(([id, name]) => ({ id, name })) }))
  })).pipe(
    Command.withDescription("Apply pending database migrations and print what was applied as JSON")
  )
