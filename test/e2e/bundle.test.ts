/**
 * `herald` runs the bundle `npm install` builds (apps/herald/src/bundle.ts) while every source it was built
 * from is unchanged, and the sources otherwise: the run's set-up made it current, a changed, touched or
 * removed source makes it stale, and a process loads the bundle's CLI or the sources' as the check says,
 * answering the same either way.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { bundleIsCurrent, sourcesFile, stampOf } from "../../apps/herald/src/bundle.ts"
import type { Sources } from "../../apps/herald/src/bundle.ts"
import { tempDir } from "../support/database.ts"
import { heraldArgs } from "../support/process.ts"

const root = path.resolve(import.meta.dirname, "../..")

/** Preloaded into a `herald` process: names on stderr each module of apps/herald/ it loads. */
const traceLoads = "data:text/javascript,import{registerHooks}from'node:module';registerHooks({load(u,c,n){if(u.includes('/apps/herald/'))process.stderr.write('loaded '+u+'\\n');return n(u,c)}})"

/** `herald <args…>` with the loads of apps/herald/ traced; `env` adds to a minimal environment. */
const traced = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<{ code: number; stdout: string; loaded: Array<string> }>((resolve) => {
      execFile(process.execPath, ["--import", traceLoads, ...heraldArgs(args)], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env }
      }, (error, stdout, stderr) => {
        const loaded = stderr.split("\n").filter((l) => l.startsWith("loaded ")).map((l) => path.relative(root, new URL(l.slice(7)).pathname))
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, loaded })
      })
    }))

describe("the herald bundle", () => {
  it("is current after the run's set-up, built from the CLI's, the server's and Effect's sources", () => {
    assert.isTrue(bundleIsCurrent())
    const { files } = JSON.parse(fs.readFileSync(sourcesFile, "utf8")) as Sources
    const listed = Object.keys(files).map((file) => path.relative(root, file))
    for (const source of ["apps/herald/src/cli.ts", "packages/server/src/runtime/Server.ts", "packages/api/src/index.ts", "node_modules/effect/package.json"]) {
      assert.include(listed, source)
    }
  })

  it.effect("is stale once a source it lists changes size or time, or is gone, and without its list", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("bundle")
      const source = path.join(dir, "source.ts")
      const list = path.join(dir, "sources.json")
      const record = () => fs.writeFileSync(list, JSON.stringify({ files: { [source]: stampOf(source) } } satisfies Sources))
      fs.writeFileSync(source, "export const a = 1\n")
      record()
      assert.isTrue(bundleIsCurrent(list))
      fs.writeFileSync(source, "export const a = 12\n")
      assert.isFalse(bundleIsCurrent(list), "a different size")
      record()
      const later = new Date(fs.statSync(source).mtimeMs + 5_000)
      fs.utimesSync(source, later, later)
      assert.isFalse(bundleIsCurrent(list), "the same size, a later time")
      record()
      fs.rmSync(source)
      assert.isFalse(bundleIsCurrent(list), "a source gone")
      assert.isFalse(bundleIsCurrent(path.join(dir, "missing.json")), "no list")
    }))

  it.effect("a process runs the bundle's CLI while it is current, the sources' with HERALD_FROM_SOURCE=1, and answers the same", () =>
    Effect.gen(function*() {
      const [bundled, sources] = yield* Effect.all([traced(["--help"]), traced(["--help"], { HERALD_FROM_SOURCE: "1" })], { concurrency: 2 })
      assert.deepStrictEqual([bundled.code, sources.code], [0, 0])
      assert.include(bundled.loaded, "apps/herald/dist/cli.js")
      assert.notInclude(bundled.loaded, "apps/herald/src/cli.ts")
      assert.include(sources.loaded, "apps/herald/src/cli.ts")
      assert.isFalse(sources.loaded.some((file) => file.startsWith("apps/herald/dist/")), sources.loaded.join(", "))
      assert.strictEqual(bundled.stdout, sources.stdout)
      assert.include(bundled.stdout, "herald <subcommand>")
    }))
})
