/**
 * `@herald/client` as an outside project meets it: built, packed, installed from the tarball into a
 * scratch project outside the repository, type-checked there (test/e2e/fixtures/clientProgram.ts) and
 * run on the system's Node 20 against a live `herald serve`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { childDatabase } from "../support/database.ts"
import { startServer } from "../support/process.ts"
import { personOn } from "../support/serverClients.ts"

const root = path.resolve(import.meta.dirname, "../..")
const clientDir = path.join(root, "packages/client")
const bin = path.join(root, "node_modules/.bin")

/** Node 20 of the system, not the repository's Node 24: the PATH without node_modules/.bin. */
const systemPath = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => !dir.includes("node_modules")).join(path.delimiter)

const run = (file: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(file, args, { cwd, env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    }))

const succeed = (what: string, result: { code: number; stdout: string; stderr: string }) =>
  result.code === 0 ? Effect.succeed(result.stdout) : Effect.die(new Error(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`))

const scratch = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-client-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const newest = (dir: string): number =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).reduce((latest, f) => Math.max(latest, fs.statSync(path.join(dir, f)).mtimeMs), 0)

/** dist/ older than a source it is built from (`npm install` built it; an edit since makes it stale). */
const stale = () => {
  const built = path.join(clientDir, "dist/package.json")
  if (!fs.existsSync(built)) return true
  const inputs = [path.join(clientDir, "src"), path.join(root, "packages/api/src"), path.join(clientDir, "scripts")]
  const files = ["package.json", "tsconfig.build.json", "README.md"].map((f) => fs.statSync(path.join(clientDir, f)).mtimeMs)
  return Math.max(...inputs.map(newest), ...files) > fs.statSync(built).mtimeMs
}

/** Built from the sources as they are now (unless dist/ is current), then packed: the tarball's path. */
const pack = (into: string) =>
  Effect.gen(function*() {
    if (stale()) yield* succeed("build", yield* run(process.execPath, [path.join(clientDir, "scripts/build.mjs")], root))
    const out = yield* succeed("npm pack", yield* run("npm", ["pack", path.join(clientDir, "dist"), "--pack-destination", into, "--json"], root))
    return path.join(into, (JSON.parse(out) as Array<{ filename: string }>)[0]!.filename)
  })

/** A project that knows nothing of the repository: the tarball installed, the program type-checked and emitted. */
const project = (dir: string, tarball: string) =>
  Effect.gen(function*() {
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "outside", private: true, type: "module" }))
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2022", "DOM"],
        types: [],
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: true,
        outDir: "out"
      },
      files: ["program.ts"]
    }))
    fs.copyFileSync(path.join(root, "test/e2e/fixtures/clientProgram.ts"), path.join(dir, "program.ts"))
    // `effect` comes from the npm cache that `npm ci` filled (the registry when reachable).
    yield* succeed("npm install", yield* run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], dir))
    yield* succeed("tsc", yield* run(path.join(bin, "tsc"), ["-p", "tsconfig.json"], dir))
  })

describe("@herald/client, packed", () => {
  it.live("installs outside the repository, type-checks, and runs on Node 20 against a live server", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* scratch
      const db = yield* childDatabase
      const [server] = yield* Effect.all([
        startServer(db.env),
        Effect.flatMap(pack(dir), (tarball) => project(dir, tarball))
      ], { concurrency: "unbounded" })

      // The package brings its contract with it, and nothing Node-only (browsers, Bun).
      const installed = path.join(dir, "node_modules/@herald/client")
      assert.deepStrictEqual(Object.keys(JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8")).dependencies), ["effect"])
      const runtime = fs.readdirSync(installed, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"))
      assert.deepStrictEqual(runtime.filter((f) => /from\s*["']node:|require\(/.test(fs.readFileSync(path.join(installed, f), "utf8"))), [])

      const person = yield* personOn(db.env, { email: "outside@example.test", name: "Outside" })

      const node = yield* succeed("node --version", yield* run("node", ["--version"], dir, { PATH: systemPath }))
      assert.match(node.trim(), /^v20\./)
      const out = yield* succeed("the program", yield* run("node", [path.join(dir, "out/program.js"), server.baseUrl, person.session], dir, { PATH: systemPath }))
      const result = JSON.parse(out.trim()) as Record<string, unknown>
      assert.strictEqual(result.me, person.id)
      assert.match(String(result.notificationId), /^anot_/)
      assert.deepStrictEqual(result.tokens, ["outside"])
      assert.deepStrictEqual(result.missing, { code: "NOT_FOUND", status: 404, kind: "api" })
      assert.deepStrictEqual(result.invalid, { code: "INVALID_REQUEST", kind: "local" })
      assert.strictEqual(result.viaEffect, "Via Effect")
    })), { timeout: 180_000 })
})
