/**
 * Workers start only where `herald serve` (or an in-process test server)
 * composes them: `runtime/Workers.ts` is reached from `runtime/Server.ts`
 * alone, no CLI command other than `serve` can reach it, and no source file
 * forks a loop of its own (every background loop goes through
 * `runtime/Worker.ts`, supervised on a Schedule).
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../../../..")
const serverSrc = path.join(root, "packages/server/src")
const commands = path.join(root, "apps/herald/src/commands")

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** The modules `file` imports (value or type), resolved to files of this repository. */
const importsOf = (file: string): Array<string> => {
  const text = fs.readFileSync(file, "utf8")
  const specifiers = [...text.matchAll(/(?:import|export)\s[^"']*?from\s+["']([^"']+)["']/g)].map((m) => m[1]!)
  return specifiers.flatMap((specifier) => {
    if (specifier.startsWith(".")) return [path.resolve(path.dirname(file), specifier)]
    if (specifier.startsWith("@herald/server/")) return [path.join(serverSrc, `${specifier.slice("@herald/server/".length)}.ts`)]
    return []
  })
}

/** Every repository module reachable from `entry` through imports. */
const reachable = (entry: string): Set<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file) || !fs.existsSync(file)) return
    seen.add(file)
    importsOf(file).forEach(visit)
  }
  visit(entry)
  return seen
}

const relative = (file: string) => path.relative(root, file)
const workers = path.join(serverSrc, "runtime/Workers.ts")

describe("workers are composed in one place", () => {
  it("only runtime/Server.ts imports runtime/Workers.ts", () => {
    const importers = sourceFiles(serverSrc).filter((file) => importsOf(file).includes(workers)).map(relative)
    assert.deepStrictEqual(importers, ["packages/server/src/runtime/Server.ts"])
  })

  it("no CLI command but serve reaches the workers", () => {
    for (const command of fs.readdirSync(commands).filter((name) => name !== "serve.ts")) {
      const reached = reachable(path.join(commands, command))
      assert.isFalse(reached.has(workers), `${command} reaches runtime/Workers.ts`)
      assert.isFalse(reached.has(path.join(serverSrc, "runtime/Server.ts")), `${command} reaches runtime/Server.ts`)
    }
  })

  it("no source file forks a loop of its own", () => {
    const helper = path.join(serverSrc, "runtime/Worker.ts")
    // A fiber forked for the life of a layer or process, or a hand-written endless loop. (A worker's
    // body may consume a stream with `Effect.forever`: that loop ends with its run.)
    const loops = /Effect\.forkScoped|Effect\.forkDaemon|while \(true\)/
    const offenders = sourceFiles(serverSrc)
      .filter((file) => file !== helper && loops.test(fs.readFileSync(file, "utf8")))
      .map(relative)
    assert.deepStrictEqual(offenders, [])
  })
})
