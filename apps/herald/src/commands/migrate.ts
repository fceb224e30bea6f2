/** `herald migrate`: apply pending migrations and exit (safe while a server runs). */
import { Console, Effect } from "effect"
import { Command } from "effect/cli"
import { runMigrations } from "@herald/server/db/Migrations"
import { cliDatabaseLayerRaw } from "./database.ts"

export const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    const applied = yield* runMigrations
    yield* Console.log(JSON.stringify({ applied: applied.map(([id, name]) => ({ id, name })) }))
  }).pipe(Effect.provide(cliDatabaseLayerRaw))).pipe(
    Command.withDescription("Apply pending database migrations and print what was applied as JSON")
  )
