/**
 * Builds `apps/herald/dist`: the `herald` CLI with the server, `@herald/*`, Effect and `@effect/*` in a few
 * ES modules (rolldown), and `sources.json`, every file they were built from with its stamp, which
 * src/bundle.ts checks before each run. Other packages stay external and load from node_modules as
 * they do for the sources: they carry their own files (PGlite's WebAssembly, firebase-admin's lazy
 * requires). Run by `npm install` (`prepare`), and by the test run's set-up when a source changed.
 * `import.meta.url` and `import.meta.dirname` keep meaning the source file's place (its migrations,
 * its console files), so the bundle belongs to this checkout; a moved checkout runs the sources.
 */
import { renameSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { bundleIsCurrent, distDir, sourcesFile, stampOf } from "../src/bundle.ts"
import type { Sources } from "../src/bundle.ts"

const entry = fileURLToPath(new URL("../src/cli.ts", import.meta.url))
const dist = fileURLToPath(distDir)

/** Packages inside the bundle: Herald's own and Effect's (one copy of Effect in a process, so all of them). */
const inBundle = (specifier: string) =>
  specifier === "effect" || specifier.startsWith("effect/") || specifier.startsWith("@effect/") || specifier.startsWith("@herald/")

/**
 * The file whose stamp stands for `file`: itself, or for a package's file its package.json (npm replaces
 * a package whole, and half the check's time went on the ~540 files of Effect).
 */
const stampedFile = (file: string) => {
  const inPackage = /^(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file)
  return inPackage === null ? file : `${inPackage[1]}/package.json`
}

/** Builds the bundle; answers how many sources it lists, or undefined where no bundler is installed. */
export const buildBundle = async (): Promise<number | undefined> => {
  // An install without devDependencies has no bundler: the sources run, as they always can.
  const rolldown = await import("rolldown").catch(() => undefined)
  if (rolldown === undefined) return undefined
  // Built beside dist/ and swapped in whole: a `herald` starting meanwhile (another test run, an `npm start`)
  // loads one build or the other, never a half-written one.
  const next = `${dist.replace(/\/$/, "")}.${process.pid}`
  rmSync(next, { recursive: true, force: true })
  const bundle = await rolldown.rolldown({
    input: { cli: entry },
    platform: "node",
    external: (id) => !(id.startsWith(".") || path.isAbsolute(id) || id.startsWith("\0") || inBundle(id)),
    plugins: [{
      name: "herald:module-paths",
      transform(code, id) {
        if (!code.includes("import.meta.")) return null
        return code
          .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(id)))
          .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(id).href))
      }
    }]
  })
  // No source maps: they made the build six times slower. Each module keeps a `// <source path>` line
  // above it, and `HERALD_FROM_SOURCE=1` runs the sources for a stack trace in their own lines.
  await bundle.write({ dir: next, format: "esm" })
  const files = [...new Set((await bundle.watchFiles).filter((file) => path.isAbsolute(file)).map(stampedFile))].sort()
  await bundle.close()
  const sources: Sources = { files: Object.fromEntries(files.map((file) => [file, stampOf(file)])) }
  writeFileSync(path.join(next, path.basename(fileURLToPath(sourcesFile))), JSON.stringify(sources))
  rmSync(dist, { recursive: true, force: true })
  try {
    renameSync(next, dist)
  } catch (error) {
    // Another build swapped its own in first: it was built from the same sources.
    rmSync(next, { recursive: true, force: true })
    if (!bundleIsCurrent()) throw error
  }
  return files.length
}

if (import.meta.main) {
  const started = performance.now()
  const count = await buildBundle()
  console.log(count === undefined
    ? "@herald/cli: rolldown is not installed (devDependencies omitted?); the sources run"
    : `@herald/cli: built apps/herald/dist from ${count} sources (${((performance.now() - started) / 1000).toFixed(1)} s)`)
}
