/**
 * Several `herald serve` processes on ONE PostgreSQL database, each an
 * effect/cluster runner: its own loopback HTTP port (`PORT`) and runner
 * address (`HERALD_RUNNER_ADDRESS`, where the other runners reach it), started
 * together and waited for on /readyz. A node is stopped for real — SIGKILL as
 * a crash, SIGTERM as a deploy — and started again on the same addresses, as a
 * restarted machine would be. Every process is gone when the scope closes; a
 * test that failed prints each node's log tail (a cluster's fault is usually
 * in one of them).
 *
 * PostgreSQL only (`usingPostgres`): the embedded database belongs to one process.
 */
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { Duration, Effect, Exit, Redacted } from "effect"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import * as path from "node:path"
import { postgresLayer } from "../../packages/server/src/db/Database.ts"
import { childDatabase } from "./database.ts"
import { dbPerson } from "./familyOncall.ts"
import { freePort, heraldArgs } from "./process.ts"
import { within as pollWithin } from "./serverClients.ts"
import { moveDeadline, withdrawReceipts } from "./prompts.ts"

const root = path.resolve(import.meta.dirname, "../..")

export interface ClusterNode {
  /** `a`, `b`, `c`, …: how tests and logs name it. */
  readonly name: string
  readonly baseUrl: string
  /** `host:port` of its runner: the same across restarts. */
  readonly runnerAddress: string
  /** The running process's id; undefined while it is down. */
  readonly pid: () => number | undefined
  /** SIGKILL, as a crash would; done once the process has exited. */
  readonly kill: Effect.Effect<void>
  /**
   * SIGTERM, as a deploy does; done once the process has exited. Answers whether it exited by itself
   * within 30 s (else it was killed: a graceful stop that hangs).
   */
  readonly stop: Effect.Effect<boolean>
  /** Starts it again on the same port and runner address; done once /readyz answers 200. */
  readonly start: Effect.Effect<void>
  /** Everything every run of it wrote (stdout and stderr), runs separated by a line. */
  readonly output: () => string
}

export interface Cluster {
  /** The database's settings, for `herald admin …` (cliJson). */
  readonly env: Record<string, string>
  readonly databaseUrl: string
  readonly nodes: ReadonlyArray<ClusterNode>
  /** Each node's last `lines` lines of output, for a failure's message. */
  readonly logTails: (lines?: number) => string
}

/** Resolves when `child` has exited (at once if it already has). */
const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

const waitReady = (baseUrl: string, child: ChildProcess, output: () => string) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 90_000
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`herald serve at ${baseUrl} exited (${child.exitCode ?? child.signalCode}):\n${output()}`)
      }
      try {
        if ((await fetch(`${baseUrl}/readyz`)).status === 200) return
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`herald serve at ${baseUrl} did not become ready:\n${output()}`)
  })

/** One node: its addresses fixed once, its process replaced by each start. */
const makeNode = (name: string, env: Record<string, string>) =>
  Effect.gen(function*() {
    const port = yield* freePort
    const runnerAddress = `127.0.0.1:${yield* freePort}`
    const baseUrl = `http://127.0.0.1:${port}`
    let child: ChildProcess | undefined
    let log = ""
    let runs = 0
    const output = () => log
    const processEnv = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      LOG_LEVEL: "Info",
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      HERALD_RUNNER_ADDRESS: runnerAddress
    }
    const start = Effect.suspend(() => {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        return Effect.die(new Error(`node ${name} is already running`))
      }
      runs++
      log += `\n----- node ${name} (${baseUrl}, runner ${runnerAddress}), run ${runs} -----\n`
      const c = spawn(process.execPath, heraldArgs(["serve"]), { env: processEnv, cwd: root, stdio: ["ignore", "pipe", "pipe"] })
      c.stdout?.on("data", (d) => (log += d))
      c.stderr?.on("data", (d) => (log += d))
      child = c
      return waitReady(baseUrl, c, output)
    })
    const signal = (sig: NodeJS.Signals) =>
      Effect.promise(async () => {
        const c = child
        if (c === undefined || c.exitCode !== null || c.signalCode !== null) return true
        c.kill(sig)
        if (sig === "SIGKILL") {
          await exited(c)
          return false
        }
        const byItself = await Promise.race([exited(c).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 30_000))])
        if (!byItself) {
          c.kill("SIGKILL")
          await exited(c)
        }
        return byItself
      })
    return {
      name,
      baseUrl,
      runnerAddress,
      pid: () => (child !== undefined && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
      kill: Effect.asVoid(signal("SIGKILL")),
      stop: signal("SIGTERM"),
      start,
      output
    } satisfies ClusterNode
  })

const tail = (text: string, lines: number) => text.split("\n").slice(-lines).join("\n")

/**
 * `n` nodes on a fresh database (PostgreSQL), started at once; `env` is added to each node's environment.
 * Closed with the scope: every process killed, then the database dropped.
 */
export const startCluster = (n: number, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const database = yield* childDatabase
    if (database.kind !== "postgres") return yield* Effect.die(new Error("a cluster needs PostgreSQL (TEST_DATABASE_URL)"))
    const shared = {
      ...database.env,
      // Tests poll the Person API from loopback, many times a second.
      HERALD_ADDRESS_LIMIT_PERSON_API_PER_MINUTE: "0",
      ...env
    }
    const names = "abcdefgh"
    const nodes = yield* Effect.forEach(Array.from({ length: n }, (_, i) => names[i]!), (name) => makeNode(name, shared))
    const logTails = (lines = 40) => nodes.map((node) => tail(node.output(), lines)).join("\n")
    yield* Effect.acquireRelease(
      Effect.forEach(nodes, (node) => node.start, { concurrency: "unbounded", discard: true }),
      (_, exit) =>
        Effect.gen(function*() {
          if (Exit.isFailure(exit)) console.error(`cluster logs (the test failed):\n${logTails(60)}`)
          yield* Effect.forEach(nodes, (node) => node.kill, { concurrency: "unbounded", discard: true })
        })
    )
    return { env: database.env, databaseUrl: database.env.DATABASE_URL!, nodes, logTails } satisfies Cluster
  })

/** Prints every node's log tail when `self` fails (for a cluster held by a layer, whose scope outlives each test). */
export const logsOnFailure = (cluster: Cluster) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.tapCause(self, () => Effect.sync(() => console.error(`cluster logs (the test failed):\n${cluster.logTails(60)}`)))

/** A person with a Person API session, made as `herald admin` makes them (familyOncall.ts `dbPerson`). */
export const makePerson = (cluster: Cluster, name: string) => dbPerson(cluster.env, name)

export const personClient = (node: ClusterNode, session: string) =>
  Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl: node.baseUrl, token: session, retries: 0 }))

export const agentClient = (node: ClusterNode, token: string) =>
  Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl: node.baseUrl, token, retries: 0 }))

/** Polls `read` every 100 ms until `check` holds, for at most `seconds`; dies naming `what` otherwise. */
export const within = <A, E, R>(seconds: number, read: Effect.Effect<A, E, R>, check: (a: A) => boolean, what: string) =>
  pollWithin(seconds, read, check, what, 100)

/** The sum of a metric's series on a node's /metrics. */
const metricOf = (node: ClusterNode, name: string) =>
  Effect.promise(async () => {
    const text = await (await fetch(`${node.baseUrl}/metrics`)).text()
    return text.split("\n").filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
      .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0)
  })

/**
 * Until every running node is in the cluster's healthy set and holds shards (effect/cluster's own gauges, each
 * about its node), for at most 30 s: the nodes have shared the shards out, so what follows does not measure a start.
 */
export const balanced = (cluster: Cluster) =>
  within(30, Effect.forEach(cluster.nodes.filter((n) => n.pid() !== undefined), (node) =>
    Effect.all({ healthy: metricOf(node, "effect_cluster_runners_healthy"), shards: metricOf(node, "effect_cluster_shards") })), (readings) =>
    readings.every((r) => r.healthy === 1 && r.shards > 0), "the nodes share the shards")

/** Sleeps until the wall-clock moment `at` (ms since the epoch): for an act scheduled against due times. */
export const sleepUntil = (at: number) => Effect.suspend(() => Effect.sleep(Duration.millis(Math.max(0, at - Date.now()))))

/** Runs `self` on the cluster's database (a pool of its own). */
const inDatabase = (cluster: Cluster) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(Effect.provide(postgresLayer(Redacted.make(cluster.databaseUrl), 2)), Effect.orDie)

/**
 * Moves pending prompts' deadlines (their rows and stored expiry timers) to the given moments, as if they had
 * been created so: the API's shortest expiry is a minute.
 */
export const moveDeadlines = (cluster: Cluster, deadlines: ReadonlyArray<{ readonly id: string; readonly at: number }>) =>
  Effect.forEach(deadlines, ({ at, id }) => moveDeadline(id, at), { discard: true }).pipe(inDatabase(cluster))

/** The prompts' withdrawal receipts, read from the cluster's database (test/support/prompts.ts). */
export const promptWithdrawals = (cluster: Cluster, ids: ReadonlyArray<string>) => withdrawReceipts(ids).pipe(inDatabase(cluster))

