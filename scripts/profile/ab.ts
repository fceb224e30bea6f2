/**
 * A/B of Herald's CPU per request, for a busy shared machine: two Herald
 * trees (say a `git worktree` of the commit before a change, and the change)
 * run side by side, each on a fresh PostgreSQL database, and are loaded in
 * turn, A B A B…, in short rounds, so both meet the same noise. Each round
 * prints the server's CPU time per request (/proc utime + stime); the end, the
 * medians and the ratio B / A.
 *
 *   node scripts/profile/ab.ts <tree A> <tree B> [auth|notifications] [rounds=8] [seconds=4]
 *
 * The load is the bench's (scripts/bench): 50 connections, `GET
 * /api/agent/auth/status` or `POST /api/agent/notifications` to an account
 * with three sandbox devices; rate limits off. Database from
 * `TEST_DATABASE_URL` (default the local server).
 */
import autocannon from "autocannon"
import { execFileSync, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import path from "node:path"
import { serverEnv } from "../bench/herald.ts"

const [treeA, treeB, part = "notifications", roundsArg = "8", secondsArg = "4"] = process.argv.slice(2)
if (treeA === undefined || treeB === undefined || (part !== "auth" && part !== "notifications")) {
  console.error("usage: node scripts/profile/ab.ts <tree A> <tree B> [auth|notifications] [rounds] [seconds]")
  process.exit(2)
}
const rounds = Number(roundsArg)
const seconds = Number(secondsArg)
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const node = process.execPath
const children: Array<ChildProcess> = []
const databases: Array<string> = []
const psql = (url: string, sql: string) => execFileSync("psql", [url, "-tAc", sql], { encoding: "utf8" })

const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

interface Target {
  readonly name: string
  readonly pid: number
  readonly url: string
  readonly request: { method: "GET" | "POST"; headers: Record<string, string>; body?: string }
}

const start = async (name: string, tree: string): Promise<Target> => {
  const db = `herald_ab_${randomBytes(4).toString("hex")}`
  psql(adminUrl, `CREATE DATABASE ${db}`)
  databases.push(db)
  const u = new URL(adminUrl)
  u.pathname = `/${db}`
  const port = await freePort()
  const env = { ...serverEnv(u.toString(), port), HERALD_DB_POOL_SIZE: "10" }
  const main = path.join(path.resolve(tree), "apps/herald/src/main.ts")
  const server = spawn(node, [main, "serve"], { env, stdio: ["ignore", "inherit", "inherit"] })
  children.push(server)
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) break
    if (i > 600) throw new Error(`${name} did not start`)
    await new Promise((r) => setTimeout(r, 100))
  }
  const cli = (...args: Array<string>) => JSON.parse(execFileSync(node, [main, ...args], { env, encoding: "utf8" }))
  cli("admin", "user", "create", "--email", "ab@example.test", "--name", "AB")
  const session = cli("admin", "session", "create", "--user", "ab@example.test").token as string
  const person = { authorization: `Bearer ${session}`, "content-type": "application/json" }
  const token = async (scopes: Array<string>) =>
    (await fetch(`${base}/api/app/tokens`, { method: "POST", headers: person, body: JSON.stringify({ name: "ab", scopes }) })
      .then((r) => r.json()) as { secret: string }).secret
  if (part === "auth") {
    return { name, pid: server.pid!, url: `${base}/api/agent/auth/status`, request: { method: "GET", headers: { authorization: `Bearer ${await token([])}` } } }
  }
  for (const [platform, n] of [["ios", 1], ["ios", 2], ["android", 3]] as const) {
    const r = await fetch(`${base}/api/app/devices`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ platform, deviceName: `ab ${n}`, pushToken: `ab-device-${n}` })
    })
    if (r.status !== 201) throw new Error(`device registration answered ${r.status}`)
  }
  return {
    name,
    pid: server.pid!,
    url: `${base}/api/agent/notifications`,
    request: {
      method: "POST",
      headers: { authorization: `Bearer ${await token(["notifications:send"])}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "Build finished", body: "All 212 tests passed on main.", url: "https://ci.example.test/1" })
    }
  }
}

/** One round of load: CPU µs per request of the server, and its rate. */
const round = async (t: Target, duration: number) => {
  const before = cpuSeconds(t.pid)
  const result = await autocannon({ url: t.url, duration, connections: 50, pipelining: 1, ...t.request })
  const requests = result.requests.total
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${t.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  // The pushes a notification sends may finish just after its answer: let them land in this round.
  await new Promise((r) => setTimeout(r, 500))
  return { us: ((cpuSeconds(t.pid) - before) * 1e6) / Math.max(1, requests), rate: requests / duration }
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const cleanup = () => {
  for (const c of children) c.kill("SIGTERM")
  for (const db of databases) {
    try {
      psql(adminUrl, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
    } catch {
      // best effort
    }
  }
}
process.on("SIGINT", () => {
  cleanup()
  process.exit(130)
})

try {
  const a = await start("A", treeA)
  const b = await start("B", treeB)
  // Warm both (JIT, pools), then alternate.
  await round(a, 3)
  await round(b, 3)
  const results = { A: [] as Array<number>, B: [] as Array<number> }
  for (let i = 1; i <= rounds; i++) {
    // Alternate which goes first, so neither always follows the other.
    for (const t of i % 2 === 1 ? [a, b] : [b, a]) {
      const r = await round(t, seconds)
      results[t.name as "A" | "B"].push(r.us)
      console.log(`round ${i} ${t.name}: ${r.us.toFixed(0)} µs CPU per request, ${r.rate.toFixed(0)}/s`)
    }
  }
  const ma = median(results.A)
  const mb = median(results.B)
  console.log(`\n${part}: median CPU per request A ${ma.toFixed(0)} µs, B ${mb.toFixed(0)} µs, B / A ${(mb / ma).toFixed(2)}`)
  const wins = results.A.filter((x, i) => results.B[i]! < x).length
  console.log(`B cheaper than A in ${wins} of ${rounds} rounds`)
} finally {
  cleanup()
}
