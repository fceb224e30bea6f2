/**
 * The `herald` launcher (apps/herald/bin/herald.js) on the system's Node 20, where
 * it runs the project's Node 24 as a child: one line on stderr says so, the
 * child's warnings stay quiet, a signal reaches the child (an interrupted
 * `herald ask` cancels its prompt, docs/cli.md) and the child's exit code is
 * the launcher's.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as path from "node:path"
import { Gate, GateLayer, shownOnPhone } from "../support/gate.ts"

const root = path.resolve(import.meta.dirname, "../..")
const launcher = path.join(root, "apps/herald/bin/herald.js")
/** The machine's own Node, older than the project's (the case the launcher is for). */
const systemNode = "/usr/bin/node"

const run = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(systemNode, [launcher, ...args], {
    env: { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += d))
  child.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  return { child, exited }
}

layer(GateLayer, { timeout: "120 seconds", excludeTestServices: true })("the herald launcher on Node 20", (it) => {
  it.effect("the system node is older than 24, so the launcher hands over to the project's Node 24", () =>
    Effect.sync(() => {
      const version = execFileSync(systemNode, ["--version"], { encoding: "utf8" }).trim()
      assert.isBelow(Number(version.slice(1).split(".")[0]), 24, version)
    }))

  it.effect("--help: the help on stdout, exit 0, and a single line on stderr naming Node 24", () =>
    Effect.gen(function*() {
      const result = yield* Effect.promise(() => run(["--help"], {}).exited)
      assert.strictEqual(result.code, 0)
      assert.include(result.stdout, "herald")
      const lines = result.stderr.split("\n").filter((l) => l !== "")
      assert.strictEqual(lines.length, 1, result.stderr)
      assert.match(lines[0]!, /^herald: node 20\.[\d.]+ is older than 24; running with the project's Node 24/)
    }))

  it.effect("the child's exit code is the launcher's: a usage error of ask exits 3", () =>
    Effect.gen(function*() {
      const result = yield* Effect.promise(() => run(["ask"], {}).exited)
      assert.strictEqual(result.code, 3, result.stderr)
    }))

  it.effect("SIGTERM or SIGINT to the launcher reaches a waiting herald ask: the prompt is canceled, exit 3 or as --on-error says", () =>
    Effect.gen(function*() {
      const { agent, env } = yield* Gate
      for (const [signal, flags, code] of [["SIGTERM", [], 3], ["SIGINT", ["--on-error", "deny"], 1]] as const) {
        const title = `Launcher interrupted by ${signal}`
        const { child, exited } = run(["ask", title, ...flags], env)
        yield* Effect.gen(function*() {
          const shown = yield* shownOnPhone(title)
          child.kill(signal)
          const result = yield* Effect.promise(() => exited)
          assert.strictEqual(result.code, code, result.stderr)
          assert.strictEqual((yield* agent.interactions.get({ params: { id: shown.id } })).status, "canceled")
        }).pipe(Effect.ensuring(Effect.sync(() => child.kill("SIGKILL"))))
      }
    }))
})
