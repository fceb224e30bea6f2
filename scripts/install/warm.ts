/**
 * The last step of `npm install` in this repository (`prepare`): the work every
 * first start would otherwise do, done once here. It builds the embedded
 * database's template (PGlite's initdb and the migrations, seconds of CPU;
 * db/EmbeddedTemplate.ts) and fills Node's compile cache with the modules
 * `herald serve` and the CLI load (apps/herald/src/main.ts turns the same cache
 * on), so the first `npm start` copies a template and reads compiled code.
 * It never fails the install: what it cannot do, the first start does.
 */
import { enableCompileCache, flushCompileCache } from "node:module"

enableCompileCache()
const started = performance.now()
try {
  // The modules a start loads, compiled into the cache; importing them starts nothing.
  await import("../../packages/server/src/runtime/Server.ts")
  await import("../../apps/herald/src/commands/adminPeople.ts")
  const { Effect } = await import("effect")
  const { prepareTemplate } = await import("../../packages/server/src/db/EmbeddedTemplate.ts")
  await Effect.runPromise(prepareTemplate)
  flushCompileCache()
  console.log(`herald: embedded database template and compile cache ready (${((performance.now() - started) / 1000).toFixed(1)} s)`)
} catch (error) {
  console.warn(`herald: could not prepare the first start (${String(error)}); the first start will`)
}
