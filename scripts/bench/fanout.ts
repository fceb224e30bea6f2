/**
 * The push fan-out part of `npm run bench` (issue 36, item 2): 100,000 pushes (10,000 notifications to a
 * person with 10 devices, 5 iOS and 5 Android) drained through Herald's real APNs and FCM providers and
 * its durable outbox, against protocol fakes on loopback (fanout-fakes.ts: HTTP/2 + TLS for APNs, HTTPS
 * and the OAuth token exchange for FCM), beside a floor sending the same pushes with apns2 and
 * firebase-admin in a plain loop (fanout-floor.ts).
 *
 * The drain is isolated from the queuing: the notifications are posted to a `herald serve` started with
 * HERALD_PUSH_PAUSED=true (10,000 requests would otherwise share the CPU with the drain and set its
 * pace), then the server is restarted without it and the drain is timed from the first push a fake
 * receives to the last receipt settled (its `checked_at`). Reported: the drain rate against the floor's
 * (target ≥ 0.80), the server's peak RSS, and whether each queued push reached its fake exactly once
 * with every receipt `accepted`.
 */
import { execFileSync, fork, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import type { FakeOptions, FakeReport } from "./fanout-fakes.ts"
import type { FloorOptions, FloorResult } from "./fanout-floor.ts"
import { cpuSeconds } from "./cpu.ts"
import { benchPerson, freshDatabase, startHerald } from "./herald.ts"
import { floorProfileFlags, profileDir } from "./mode.ts"
import { fixed, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { atExit, json, stop, track } from "./support.ts"

const NOTIFICATIONS = Number(process.env.BENCH_FANOUT_NOTIFICATIONS ?? 10_000)
const IOS = 5
const ANDROID = 5
const PUSHES = NOTIFICATIONS * (IOS + ANDROID)
/** Herald's default HERALD_PUSH_CONCURRENCY: the floor keeps as many pushes in flight. */
const CONCURRENCY = 64
/** Requests in flight while queuing (not measured). */
const POSTERS = 32
const TITLE = "Build finished"
const BODY = "All 212 tests passed on main."
const URL_ = "https://ci.example.test/1"
/**
 * Bounded memory: the drain holds one claimed batch (100 receipts) at a time whatever the queue's length, so the
 * server's RSS must stop growing once V8 has sized its heap to the load: the last quarter's peak within 5 % of
 * the third's. (The absolute figure is V8's choice on a machine with memory to spare: the same server reaches
 * 510–550 MB answering the 10,000 posts, and 263 MB idle.)
 */
const RSS_GROWTH = 1.05
/** The server's peak RSS allowed: the drain holds one claimed batch (100 receipts) at a time, whatever the queue's length. */
/** A throw-away CA and a certificate for the fakes' addresses and fcm.googleapis.com (the floor's FCM host). */
const certificates = (dir: string, ips: ReadonlyArray<string>) => {
  const openssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Herald Fan-out Bench CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
  openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=herald-fanout-fake")
  const sans = [...ips.map((ip) => `IP:${ip}`), "DNS:fcm.googleapis.com"].join(",")
  fs.writeFileSync(path.join(dir, "server.ext"), `subjectAltName=${sans}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`)
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
    "-days", "2", "-extfile", "server.ext")
  const read = (name: string) => fs.readFileSync(path.join(dir, name), "utf8")
  return { caFile: path.join(dir, "ca.pem"), cert: read("server.pem"), key: read("server.key") }
}

/** A loopback address of its own (all of 127/8 is loopback on Linux): the APNs fake must take port 443. */
const loopback = () => `127.${1 + (randomBytes(1)[0]! % 250)}.${randomBytes(1)[0]!}.${1 + (randomBytes(1)[0]! % 250)}`

interface Fake {
  readonly child: ChildProcess
  readonly reset: () => Promise<void>
  readonly report: () => Promise<FakeReport>
}

const startFake = (options: FakeOptions) =>
  new Promise<Fake>((resolve, reject) => {
    const child = track(fork(path.join(import.meta.dirname, "fanout-fakes.ts"), [], { serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] }))
    const ask = <A>(message: string) =>
      new Promise<A>((answer) => {
        child.once("message", (reply) => answer(reply as A))
        child.send(message)
      })
    child.once("exit", (code) => reject(new Error(`the ${options.role} fake exited ${code}`)))
    child.once("message", () => resolve({ child, reset: () => ask("reset"), report: () => ask("report") }))
    child.send(options)
  })

/** Pushes lost and sent more than once, against the keys (`"<token> notification:<id>"`) that were queued. */
const exactlyOnce = (expected: ReadonlyArray<string>, reports: ReadonlyArray<FakeReport>) => {
  const seen = new Map<string, number>()
  for (const r of reports) for (const [key, n] of r.counts) seen.set(key, (seen.get(key) ?? 0) + n)
  let lost = 0
  let twice = 0
  for (const key of expected) {
    const n = seen.get(key) ?? 0
    if (n === 0) lost += 1
    else twice += n - 1
    seen.delete(key)
  }
  // Anything else a fake counted was never queued: an extra send as much as a duplicate is.
  const unexpected = [...seen.values()].reduce((a, b) => a + b, 0)
  return { lost, twice: twice + unexpected, unexpected, refused: reports.reduce((a, r) => a + r.refused, 0) }
}

/** The floor in its own process (trusting the fakes' CA), profiled when asked; its JSON line. */
const runFloor = (file: string, caFile: string) =>
  new Promise<FloorResult>((resolve, reject) => {
    const child = track(spawn(process.execPath, [...floorProfileFlags("fanout"), path.join(import.meta.dirname, "fanout-floor.ts"), file], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
      stdio: ["ignore", "pipe", "inherit"]
    }))
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").at(-1)!)) : reject(new Error(`fanout-floor.ts exited ${code}`))))
  })

const statusOf = (pid: number, field: "VmRSS" | "VmHWM") => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? 0 : Number(match[1]) / 1024
}

export const benchFanout = async (): Promise<ReadonlyArray<SummaryRow>> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-fanout-"))
  atExit(() => fs.rmSync(dir, { recursive: true, force: true }))
  const apnsAddress = loopback()
  const fcmAddress = loopback()
  const tls = certificates(dir, [apnsAddress, fcmAddress])
  const apnsKey = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const googleKey = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const pem = (key: { export: (o: { type: "pkcs8" | "spki"; format: "pem" }) => string | Buffer }, type: "pkcs8" | "spki") =>
    String(key.export({ type, format: "pem" }))
  const teamId = "BENCHTEAM1"
  const keyId = "BENCHKEY01"
  const topic = "test.herald.bench"
  const projectId = "herald-bench"
  const serviceAccount = {
    type: "service_account",
    project_id: projectId,
    private_key_id: randomBytes(20).toString("hex"),
    private_key: pem(googleKey.privateKey, "pkcs8"),
    client_email: `herald-push@${projectId}.iam.gserviceaccount.com`,
    token_uri: "https://oauth2.googleapis.com/token"
  }
  const fixedToken = `ya29.floor-${randomBytes(12).toString("hex")}`
  const [apnsFake, fcmFake] = await Promise.all([
    startFake({ role: "apns", address: apnsAddress, port: 443, cert: tls.cert, key: tls.key, publicKey: pem(apnsKey.publicKey, "spki"), teamId, keyId, topic }),
    startFake({
      role: "fcm", address: fcmAddress, port: 443, cert: tls.cert, key: tls.key, publicKey: pem(googleKey.publicKey, "spki"),
      clientEmail: serviceAccount.client_email, tokenUri: serviceAccount.token_uri, fixedToken
    })
  ])
  const fakes = [apnsFake, fcmFake]

  const pushEnv = {
    APNS_KEY: pem(apnsKey.privateKey, "pkcs8"),
    APNS_KEY_ID: keyId,
    APNS_TEAM_ID: teamId,
    APNS_TOPIC: topic,
    APNS_HOST: apnsAddress,
    FCM_SERVICE_ACCOUNT: JSON.stringify(serviceAccount),
    FCM_ENDPOINT: `https://${fcmAddress}`,
    NODE_EXTRA_CA_CERTS: tls.caFile
  }
  const databaseUrl = freshDatabase("herald_fanout")

  // Queuing, paused: nothing is sent while 10,000 notifications are posted.
  const queuing = await startHerald(databaseUrl, { env: { ...pushEnv, HERALD_PUSH_PAUSED: "true" } })
  // The CPU a start costs (the drain's server starts the same way): taken off the drain's CPU below.
  const startCpu = cpuSeconds(queuing.child.pid!)
  const session = benchPerson(queuing)
  const asPerson = (body: unknown) => ({
    method: "POST",
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const iosTokens = Array.from({ length: IOS }, () => randomBytes(32).toString("hex"))
  const androidTokens = Array.from({ length: ANDROID }, (_, i) => `fcm-bench-${i}-${randomBytes(40).toString("base64url")}`)
  for (const [platform, tokens] of [["ios", iosTokens], ["android", androidTokens]] as const) {
    for (const [i, pushToken] of tokens.entries()) {
      await json(await fetch(`${queuing.baseUrl}/api/app/devices`, asPerson({ platform, deviceName: `fan-out ${platform} ${i}`, pushToken })))
    }
  }
  const sender = await json(await fetch(`${queuing.baseUrl}/api/app/tokens`, asPerson({ name: "fan-out sender", scopes: ["notifications:send"] })))
  const post = {
    method: "POST",
    headers: { authorization: `Bearer ${sender.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ title: TITLE, body: BODY, url: URL_ })
  }
  const queueStarted = performance.now()
  let posted = 0
  await Promise.all(Array.from({ length: POSTERS }, async () => {
    while (posted < NOTIFICATIONS) {
      posted += 1
      await json(await fetch(`${queuing.baseUrl}/api/agent/notifications`, post))
    }
  }))
  const queueMs = performance.now() - queueStarted
  const queuingRss = statusOf(queuing.child.pid!, "VmRSS")
  await stop(queuing.child, 30)

  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  const scalar = async (text: string) => Number((await db.query(text)).rows[0]?.n ?? 0)
  const queued = await scalar("SELECT count(*)::int AS n FROM push_queue")
  if (queued !== PUSHES) throw new Error(`fan-out: ${queued} pushes queued, expected ${PUSHES}`)
  const expected = (await db.query<{ key: string }>(
    `SELECT d.push_token || ' notification:' || r.item_id AS key
     FROM push_receipts r JOIN devices d ON d.id = r.device_id WHERE r.origin = 'notification'`
  )).rows.map((r) => r.key)
  const notificationIds = (await db.query<{ id: string }>("SELECT id FROM notifications ORDER BY created_at, id")).rows.map((r) => r.id)

  // The drain: the same database, delivery on, profiled when asked.
  await Promise.all(fakes.map((f) => f.reset()))
  // BENCH_NODE_FLAGS as for the bench's main server (e.g. `--max-old-space-size=128`: what the drain needs live).
  const drainer = await startHerald(databaseUrl, {
    env: pushEnv,
    nodeFlags: [
      ...(profileDir !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}/fanout`] : []),
      ...(process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [])
    ]
  })
  const pid = drainer.child.pid!
  // RSS sampled every 100 ms with the queue's length, so a growth with the pushes sent would show per quarter.
  const quarters = [0, 0, 0, 0]
  const deadline = Date.now() + 600_000
  for (;;) {
    const left = await scalar("SELECT count(*)::int AS n FROM push_queue")
    const quarter = Math.min(3, Math.floor((4 * (PUSHES - left)) / PUSHES))
    quarters[quarter] = Math.max(quarters[quarter]!, statusOf(pid, "VmRSS"))
    if (left === 0) break
    if (Date.now() > deadline) throw new Error("fan-out: the queue did not drain in 10 minutes")
    if (drainer.child.exitCode !== null) throw new Error(`fan-out: the server exited ${drainer.child.exitCode} mid-drain`)
    await new Promise((r) => setTimeout(r, 100))
  }
  // The kernel's high-water mark catches a peak between two samples (and before the first).
  const rssPeak = Math.max(...quarters, statusOf(pid, "VmHWM"))
  const heraldCpuMs = ((cpuSeconds(pid) - startCpu) * 1000) / PUSHES
  const lastSettled = await scalar("SELECT (extract(epoch FROM max(checked_at)) * 1000)::float8 AS n FROM push_receipts")
  const statuses = (await db.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM push_receipts GROUP BY status")).rows
  await db.end()
  const heraldReports = await Promise.all(fakes.map((f) => f.report()))
  await stop(drainer.child, 60)
  const firstPush = Math.min(...heraldReports.filter((r) => r.first > 0).map((r) => r.first))
  const heraldMs = lastSettled - firstPush
  const herald = exactlyOnce(expected, heraldReports)
  const accepted = statuses.find((s) => s.status === "accepted")?.n ?? 0

  // The floor: the same pushes, the same fakes, nothing durable.
  await Promise.all(fakes.map((f) => f.reset()))
  const floorFile = path.join(dir, "floor.json")
  fs.writeFileSync(floorFile, JSON.stringify({
    apnsAddress, fcmAddress, apnsKey: pushEnv.APNS_KEY, keyId, teamId, topic, projectId, fixedToken, iosTokens, androidTokens,
    notificationIds, title: TITLE, body: BODY, url: URL_, concurrency: CONCURRENCY
  } satisfies FloorOptions))
  const floorResult = await runFloor(floorFile, tls.caFile)
  const floor = exactlyOnce(expected, await Promise.all(fakes.map((f) => f.report())))
  await Promise.all(fakes.map((f) => stop(f.child, 5)))

  const heraldRate = (PUSHES * 1000) / heraldMs
  const floorRate = (PUSHES * 1000) / floorResult.ms
  const floorCpuMs = floorResult.cpuMs / PUSHES
  const ratio = heraldRate / floorRate
  const heraldClean = herald.lost === 0 && herald.twice === 0 && accepted === PUSHES
  const floorClean = floor.lost === 0 && floor.twice === 0 && floorResult.failed === 0
  console.log(`
push fan-out — ${fixed(PUSHES)} pushes (${fixed(NOTIFICATIONS)} notifications × ${IOS} iOS + ${ANDROID} Android devices), ${CONCURRENCY} in flight
queued paused in ${(queueMs / 1000).toFixed(1)} s (${fixed((NOTIFICATIONS * 1000) / queueMs)} notifications/s, ${POSTERS} at once; not measured), server RSS then ${queuingRss.toFixed(0)} MB
drain: server RSS peak per quarter of the queue sent ${quarters.map((q) => q.toFixed(0)).join(" / ")} MB; last push at a fake ${((Math.max(...heraldReports.map((r) => r.last)) - firstPush) / 1000).toFixed(2)} s after the first

                         seconds   pushes/s  CPU µs/push   peak RSS   lost  twice  refused
herald (outbox, APNs+FCM) ${(heraldMs / 1000).toFixed(2).padStart(7)} ${fixed(heraldRate).padStart(10)} ${fixed(heraldCpuMs * 1000).padStart(12)} ${`${rssPeak.toFixed(0)} MB`.padStart(10)} ${String(herald.lost).padStart(6)} ${String(herald.twice).padStart(6)} ${String(herald.refused).padStart(8)}
floor (apns2 + firebase)  ${(floorResult.ms / 1000).toFixed(2).padStart(7)} ${fixed(floorRate).padStart(10)} ${fixed(floorCpuMs * 1000).padStart(12)} ${`${floorResult.rssPeakMb.toFixed(0)} MB`.padStart(10)} ${String(floor.lost).padStart(6)} ${String(floor.twice).padStart(6)} ${String(floor.refused).padStart(8)}

ratio herald/floor: ${ratio.toFixed(2)} (target ≥ 0.80); receipts: ${statuses.map((s) => `${s.status} ${s.n}`).join(", ")}`)
  return [
    summaryRow({
      what: `push fan-out: ${fixed(PUSHES)} pushes drained/s (APNs + FCM)`,
      herald: fixed(heraldRate),
      floor: fixed(floorRate),
      ratio: ratio.toFixed(2),
      target: "ratio ≥ 0.80",
      met: ratio >= 0.8
    }),
    summaryRow({
      what: "… CPU per push (server process; start-up taken off)",
      herald: `${fixed(heraldCpuMs * 1000)} µs`,
      floor: `${fixed(floorCpuMs * 1000)} µs`,
      ratio: (heraldCpuMs / floorCpuMs).toFixed(2),
      target: "(information)",
      met: undefined
    }),
    summaryRow({
      what: "… server RSS peak (ratio: last ¼ of the drain / 3rd ¼)",
      herald: `${rssPeak.toFixed(0)} MB`,
      floor: `${floorResult.rssPeakMb.toFixed(0)} MB`,
      ratio: (quarters[3]! / quarters[2]!).toFixed(2),
      target: `flat: last ¼ ≤ ${RSS_GROWTH} × 3rd ¼`,
      // A drain too short to sample each quarter has no growth to judge.
      met: quarters[2]! === 0 || quarters[3]! <= RSS_GROWTH * quarters[2]!
    }),
    summaryRow({
      what: "… lost / sent twice",
      herald: `${herald.lost} / ${herald.twice}`,
      floor: `${floor.lost} / ${floor.twice}`,
      target: "0 / 0, all accepted",
      met: heraldClean && floorClean
    })
  ]
}
