/**
 * Which code a `herald` process runs. `npm install` bundles the CLI with the
 * server, `@herald/*` and Effect into `apps/herald/dist` (scripts/bundle.ts):
 * loading ~900 modules one by one was most of a start's CPU (a `serve` 2.0 s →
 * 1.25 s, `ask` 0.75 s → 0.3 s, `--help` 0.35 s → 0.1 s; docs/benchmarks.md). The
 * bundle runs only while every file it was built from is as it was then (size
 * and modification time, in `dist/sources.json`); after any edit, or with
 * `HERALD_FROM_SOURCE=1`, the TypeScript sources run, so a change is never
 * hidden behind an old build. Imports only `node:fs`: it runs before the
 * compile cache has anything to serve.
 */
import { readFileSync, statSync } from "node:fs"

/** Where the bundle and its list of sources live. */
export const distDir = new URL("../dist/", import.meta.url)
export const sourcesFile = new URL("sources.json", distDir)

/** What the bundle records of each source: its size and modification time. */
export const stampOf = (file: string): string => {
  const stat = statSync(file)
  return `${stat.size}:${stat.mtimeMs}`
}

export interface Sources {
  /** Every source the bundle was built from, a package by its package.json (absolute paths: a moved checkout is a changed one), and its stamp. */
  readonly files: Readonly<Record<string, string>>
}

/** True when the bundle exists and no file it was built from (the list in `sources`) has changed since. */
export const bundleIsCurrent = (sources: URL | string = sourcesFile): boolean => {
  try {
    const { files } = JSON.parse(readFileSync(sources, "utf8")) as Sources
    for (const file in files) if (stampOf(file) !== files[file]) return false
    return true
  } catch {
    // No bundle (an install that skipped its scripts), a source gone, or an unreadable list: the sources run.
    return false
  }
}

/** The module to run: the bundle's CLI when it is current, else the sources'. */
export const cliModule = (): string =>
  process.env.HERALD_FROM_SOURCE !== "1" && bundleIsCurrent()
    ? new URL("cli.js", distDir).href
    : new URL("./cli.ts", import.meta.url).href
