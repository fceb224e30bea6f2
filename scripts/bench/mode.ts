/**
 * The run's mode: the full run (the figures in docs/benchmarks.md), or
 * `npm run bench -- --quick`, the same summary rows in under 2 minutes for
 * checking a change: shorter loads, and the parts that are no row of the
 * summary (raw baselines, prompts, pages) left out. `quickSkips` says what
 * quick leaves out or shortens, for the output.
 */
export const quick = process.argv.slice(2).includes("--quick")

/**
 * `BENCH_PROFILE=<dir>`: Herald's V8 CPU profile is written to `<dir>`, each floor's to
 * `<dir>/floor-<name>/`, so `scripts/profile/group.ts` can set a route's cost beside its floor's.
 */
export const profileDir = process.env.BENCH_PROFILE
/** Node.js flags that profile the floor `name` when `BENCH_PROFILE` is set (none otherwise). */
export const floorProfileFlags = (name: string): Array<string> =>
  profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}/floor-${name}`]

/** Seconds of each measured autocannon load (auth status, notifications). */
export const DURATION = Number(process.env.BENCH_SECONDS ?? (quick ? 4 : 10))
/** Seconds of load before each measured one (JIT, connection pools). */
export const WARMUP = quick ? 2 : 3
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)

/** Live activities: the measured seconds and the warm-up before them (one continuous load). */
export const ACTIVITY_SECONDS = Number(process.env.BENCH_ACTIVITY_SECONDS ?? (quick ? 8 : 20))
export const ACTIVITY_WARMUP = quick ? 5 : 10

export const quickSkips = [
  `loads of ${DURATION} s after ${WARMUP} s warm-ups (full run: 10 s after 3 s)`,
  "no raw node:http, raw pg or raw-floor baselines (auth status, notifications)",
  `live activities measured ${ACTIVITY_SECONDS} s after a ${ACTIVITY_WARMUP} s warm-up (full run: 20 s after 10 s), ` +
  "the event-loop window open when measuring starts not counted",
  "prompts, pages, the cluster part (failover, forwarding), push fan-out, the soak and the test suite not run"
]

/**
 * The soak (soak.ts, issue 31): `--soak` runs it alone, 10 minutes (`--quick`: 2); `--seeded` (implies
 * `--soak`) first seeds a million receipts and restarts the server on them. The full run ends with the
 * 2-minute soak; `--quick` has none (its budget is 2 minutes in all).
 */
export const seeded = process.argv.slice(2).includes("--seeded")
export const soakOnly = seeded || process.argv.slice(2).includes("--soak")
export const SOAK_MINUTES = quick ? 2 : 10
/** The soak the full run ends with. */
export const FULL_RUN_SOAK_MINUTES = 2

/**
 * The cluster part (failover.ts, issue 33): `--failover` runs it alone (`--failover --quick`: one failover round and
 * the quick loads); the full run includes it; `--quick` alone has none.
 */
export const failoverOnly = process.argv.slice(2).includes("--failover")
