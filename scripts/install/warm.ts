/**
 * The last step of `npm install` in this repository (`prepare`, after the
 * bundle is built): the work every first start would otherwise do, done once
 * here. It builds the embedded database's template (PGlite's initdb and the
 * migrations, seconds of CPU; db/EmbeddedTemplate.ts) and fills Node's compile
 * cache with the modules `herald serve` and the CLI load — the bundle's, or the
 * sources' where no bundle could be built (apps/herald/src/bundle.ts) —, so the
 * first `npm start` copies a template and reads compiled code. It never fails
 * the install: what it cannot do, the first start does.
 */
import { readdirSync } from "node:fs"
import { enableCompileCache, flushCompileCache } from "node:module"
import { bundleIsCurrent, distDir } from "../../apps/herald/src/bundle.ts"

enableCompileCache()
const started = performance.now()
try {
  // The modules a start loads, compiled into the cache; importing them starts nothing.
  if (bundleIsCurrent()) {
    for (const file of readdirSync(distDir).filter((name) => name.endsWith(".js"))) await import(new URL(file, distDir).href)
  } else {
    await import("../../packages/server/src/runtime/Server.ts")
    await import("../../apps/herald/src/commands/adminPeople.ts")
  }
  const { Effect } = await import("effect")
  const { prepareTemplate } = await import("../../packages/server/src/db/EmbeddedTemplate.ts")
  await Effect.runPromise(prepareTemplate)
  flushCompileCache()
  console.log(`herald: embedded database template and compile cache ready (${((performance.now() - started) / 1000).toFixed(1)} s)`)
} catch (error) {
  console.warn(`herald: could not prepare the first start (${String(error)}); the first start will`)
}
