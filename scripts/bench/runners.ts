/**
 * Herald as effect/cluster runners for the bench's cluster part (failover.ts,
 * forwarding.ts): `herald serve` processes on one database, each with its own
 * `HERALD_RUNNER_ADDRESS`, started again on the same addresses after a kill;
 * and whether the cluster has settled (its own gauges on /metrics).
 */
import { startHerald } from "./herald.ts"
import type { Herald } from "./herald.ts"
import { profileDir } from "./mode.ts"
import { freePort, stop } from "./support.ts"

/** A runner: `herald serve` with its runner address; `herald` is replaced by each restart. */
export interface Runner {
  herald: Herald
  readonly runnerAddress: string
  readonly label: string
}

/** With `BENCH_PROFILE=<dir>`, each runner's CPU profile goes to `<dir>/cluster-<label>/`. */
const profileFlags = (label: string) => (profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}/cluster-${label}`])

/** `n` runners on `databaseUrl`, started at once (the migrations serialise on their lock). */
export const startRunners = (databaseUrl: string, n: number, label: string) =>
  Promise.all(Array.from({ length: n }, async (_, i): Promise<Runner> => {
    const runnerAddress = `127.0.0.1:${await freePort()}`
    const herald = await startHerald(databaseUrl, { env: { HERALD_RUNNER_ADDRESS: runnerAddress }, nodeFlags: profileFlags(`${label}-${i}`) })
    return { herald, runnerAddress, label: `${label}-${i}` }
  }))

/** Starts a stopped or killed runner again on its port and runner address. */
export const restartRunner = async (runner: Runner, databaseUrl: string) => {
  runner.herald = await startHerald(databaseUrl, {
    port: runner.herald.port,
    env: { HERALD_RUNNER_ADDRESS: runner.runnerAddress },
    nodeFlags: profileFlags(runner.label)
  })
}

/** Stops every runner gracefully (profiles are written then). */
export const stopRunners = (runners: ReadonlyArray<Runner>) =>
  Promise.all(runners.map((r) => stop(r.herald.child, profileDir === undefined ? 10 : 60)))

/** The sum of a metric's series on a node's /metrics (0 when it has none). */
const metricOf = async (baseUrl: string, name: string) => {
  const text = await (await fetch(`${baseUrl}/metrics`)).text()
  return text.split("\n").filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0)
}

/**
 * Until every runner is in the healthy set and holds at least half its even share of the shards (the
 * cluster's own gauges, each about its node), for at most 20 s; whether it did. A measurement while shards
 * still move after a start measures the start.
 */
export const settled = async (runners: ReadonlyArray<Runner>) => {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const readings = await Promise.all(runners.map(async (r) => ({
      shards: await metricOf(r.herald.baseUrl, "effect_cluster_shards"),
      healthy: await metricOf(r.herald.baseUrl, "effect_cluster_runners_healthy")
    })))
    const share = readings.reduce((sum, x) => sum + x.shards, 0) / runners.length
    if (readings.every((x) => x.healthy === 1 && x.shards > 0 && x.shards >= share / 2)) return true
    await new Promise((r) => setTimeout(r, 250))
  }
  return false
}
