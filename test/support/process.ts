/**
 * Real `herald` processes for end-to-end tests: `herald serve` on a free port
 * (waited for on /readyz), and one-shot CLI commands whose JSON stdout is
 * parsed. Every child is killed when the test's scope closes.
 */
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const entry = path.join(root, "apps/herald/src/main.ts")

/**
 * Node's arguments for `herald <args…>`. A child here lives seconds, and V8 by default spends about
 * 2 s of CPU optimising PGlite's 9 MB of WebAssembly in the background — code the child never lives
 * long enough to run. `--liftoff-only` keeps V8's baseline WebAssembly compiler: the same program,
 * the same answers; the e2e files took a third less CPU with it (docs/benchmarks.md).
 */
export const heraldArgs = (args: ReadonlyArray<string>) => ["--liftoff-only", entry, ...args]

const baseEnv = (env: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  LOG_LEVEL: "Warn",
  ...env
})

/** Whether `port` can be listened on at 127.0.0.1 now (it is closed again before this resolves). */
const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/**
 * A port for a process to listen on, free when chosen. Drawn at random below Linux's ephemeral range
 * (32768–60999): a port the kernel picked (`listen(0)`) is one it also hands to outgoing connections,
 * and the test's own database and HTTP clients took such a port before the child could bind it
 * (EADDRINUSE on a cluster runner's address under load).
 */
export const freePort = Effect.promise(async () => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (await canListen(port)) return port
  }
  throw new Error("no free port between 20000 and 31999 at 127.0.0.1")
})

/** Runs `herald <args…>` to completion (with `stdin` written to it and closed, when given); resolves with its exit code and output. */
export const cli = (args: ReadonlyArray<string>, env: Record<string, string>, options: { readonly stdin?: string } = {}) =>
  Effect.promise(() =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, heraldArgs(args), { env: baseEnv(env), cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      })
      if (options.stdin !== undefined) child.stdin?.end(options.stdin)
    }))

/** `herald <args…>` that must succeed and print one JSON object. */
export const cliJson = <A = Record<string, unknown>>(args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.flatMap(cli(args, env), (r) =>
    r.code === 0
      ? Effect.sync(() => JSON.parse(r.stdout.trim()) as A)
      : Effect.die(new Error(`herald ${args.join(" ")} exited ${r.code}: ${r.stderr}`)))

export interface ServerProcess {
  readonly baseUrl: string
  readonly child: ChildProcess
  readonly output: () => string
  /** What it wrote to stdout alone (logs belong on stderr). */
  readonly stdout: () => string
  /** SIGKILL, as a crash would. */
  readonly kill: Effect.Effect<void>
}

const waitReady = (baseUrl: string, child: ChildProcess, output: () => string) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`herald serve exited ${child.exitCode}:\n${output()}`)
      try {
        const response = await fetch(`${baseUrl}/readyz`)
        if (response.status === 200) return
      } catch {
        // not listening yet
      }
      // A refused connection costs nothing: a short step keeps each start from waiting out most of one.
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error(`herald serve did not become ready:\n${output()}`)
  })

/** Starts `herald serve` with the given environment and waits until it is ready. */
export const startServer = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const port = yield* freePort
    let log = ""
    let stdout = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const c = spawn(process.execPath, heraldArgs(["serve"]), {
          env: baseEnv({ LOG_LEVEL: "Info", ...env, PORT: String(port), HOST: "127.0.0.1" }),
          cwd: root,
          stdio: ["ignore", "pipe", "pipe"]
        })
        c.stdout?.on("data", (d) => {
          log += d
          stdout += d
        })
        c.stderr?.on("data", (d) => (log += d))
        return c
      }),
      (c) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve()
            c.once("exit", () => resolve())
            c.kill("SIGTERM")
            setTimeout(() => c.kill("SIGKILL"), 10_000).unref()
          }))
    )
    const baseUrl = `http://127.0.0.1:${port}`
    yield* waitReady(baseUrl, child, () => log)
    return {
      baseUrl,
      child,
      output: () => log,
      stdout: () => stdout,
      kill: Effect.promise(() =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve()
          child.once("exit", () => resolve())
          child.kill("SIGKILL")
        }))
    } satisfies ServerProcess
  })

/** Stops a server gracefully (SIGTERM) and waits for it to exit. */
export const stopServer = (server: ServerProcess) =>
  Effect.promise(() =>
    new Promise<number | null>((resolve) => {
      if (server.child.exitCode !== null) return resolve(server.child.exitCode)
      server.child.once("exit", (code) => resolve(code))
      server.child.kill("SIGTERM")
    }))
