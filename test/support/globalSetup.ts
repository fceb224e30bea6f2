/**
 * Once per `vitest run`: the `herald` bundle made current, and one database migrated to the latest schema, which
 * every test file copies instead of creating and migrating its own (initdb of
 * an embedded PGlite alone costs seconds). On PostgreSQL it is a template
 * database (`CREATE DATABASE … TEMPLATE`); embedded, a closed PGlite data
 * directory copied file by file, itself a copy of the installation's template
 * where there is one. Removed when the run ends.
 */
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import type { TestProject } from "vitest/node"
import { bundleIsCurrent } from "../../apps/herald/src/bundle.ts"
import { buildBundle } from "../../apps/herald/scripts/bundle.ts"
import { embeddedClientLayer, postgresLayer } from "../../packages/server/src/db/Database.ts"
import { serveEmbedded } from "../../packages/server/src/db/Embedded.ts"
import { seedFromTemplate } from "../../packages/server/src/db/EmbeddedTemplate.ts"
import { runMigrations } from "../../packages/server/src/db/Migrations.ts"
import { adminStatement, withDatabase } from "./postgresAdmin.ts"
import { makeScratchDir } from "./scratchDir.ts"

export type DatabaseTemplate =
  | { readonly kind: "postgres"; readonly name: string }
  | { readonly kind: "embedded"; readonly dataDir: string }

declare module "vitest" {
  export interface ProvidedContext {
    readonly heraldTemplate: DatabaseTemplate
  }
}

const postgresTemplate = async (adminUrl: string) => {
  const name = `herald_tpl_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await Effect.runPromise(adminStatement(adminUrl, `CREATE DATABASE "${name}"`))
  // The pool closes with its scope: a template with a connection open cannot be copied.
  await Effect.runPromise(runMigrations.pipe(
    Effect.provide(postgresLayer(Redacted.make(withDatabase(adminUrl, name)), 1)),
    Effect.scoped,
    Effect.orDie
  ))
  return {
    template: { kind: "postgres", name } as const,
    teardown: () => Effect.runPromise(Effect.ignore(adminStatement(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)))
  }
}

const embeddedTemplate = async () => {
  const dataDir = makeScratchDir("template")
  // The installation's template (db/EmbeddedTemplate.ts, built by `npm install` for these PGlite and
  // migration files) is the same database: copying it saves the run its initdb and migrations.
  if (await Effect.runPromise(seedFromTemplate(dataDir)) === undefined) {
    // PGlite closes (a clean shut-down) with the scope, so the directory is whole when copied.
    await Effect.runPromise(serveEmbedded(dataDir).pipe(
      Effect.flatMap((socket) => Effect.scoped(Effect.provide(runMigrations, embeddedClientLayer(socket)))),
      Effect.scoped,
      Effect.orDie
    ))
  }
  return {
    template: { kind: "embedded", dataDir } as const,
    teardown: () => fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

export default async function setup(project: TestProject) {
  // The `herald` processes the end-to-end tests start run the bundle while it is current (apps/herald/src/bundle.ts):
  // after an edit, built again here, so they test the code as it is now, at the bundle's speed.
  if (!bundleIsCurrent()) await buildBundle()
  // For measuring what the template saves: every file then creates and migrates its own.
  if (process.env.HERALD_TEST_TEMPLATE === "off") return
  const adminUrl = process.env.TEST_DATABASE_URL
  const started = performance.now()
  const { template, teardown } = adminUrl !== undefined && adminUrl !== "" ? await postgresTemplate(adminUrl) : await embeddedTemplate()
  if (process.env.HERALD_TEST_TIMINGS === "1") console.log(`database template (${template.kind}) ready in ${Math.round(performance.now() - started)} ms`)
  project.provide("heraldTemplate", template)
  return teardown
}
