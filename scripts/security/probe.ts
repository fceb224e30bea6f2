/**
 * The outside probe of issue 30, repeated: starts a fresh `herald serve` on
 * its own embedded database (or `--database-url`), makes a person, a session
 * and an agent token with the operator CLI, and sends each request the probe
 * found a weakness with. Every row must be refused or bounded; the script
 * prints one line a finding and exits 1 when any is not.
 *
 *   node scripts/security/probe.ts [--database-url postgres://…]
 *
 * The tests hold each rule (packages/server/test/**); this is the same
 * requests from outside, against the real process, as a person checking a
 * deployment would send them.
 */
import { execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const entry = path.join(root, "apps/herald/src/main.ts")
const argv = process.argv.slice(2)
const databaseUrl = argv.includes("--database-url") ? argv[argv.indexOf("--database-url") + 1] : undefined

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const dataDir = mkdtempSync(path.join(tmpdir(), "herald-probe-"))
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const env = {
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  PORT: String(port),
  HERALD_DATA_DIR: dataDir,
  LOG_LEVEL: "Debug",
  ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl })
}
const server = spawn(process.execPath, [entry, "serve"], { env, cwd: root, stdio: ["ignore", "pipe", "pipe"] })
let log = ""
server.stdout.on("data", (chunk) => (log += chunk))
server.stderr.on("data", (chunk) => (log += chunk))
const stop = () => {
  server.kill("SIGTERM")
  rmSync(dataDir, { recursive: true, force: true })
}

const until = Date.now() + 30_000
for (;;) {
  const ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false)
  if (ready) break
  if (Date.now() > until) {
    stop()
    throw new Error(`herald did not answer /readyz within 30 s:\n${log}`)
  }
  await new Promise((r) => setTimeout(r, 100))
}

const admin = (...args: Array<string>) =>
  JSON.parse(execFileSync(process.execPath, [entry, "admin", ...args], { env: { ...env, LOG_LEVEL: "Warn" }, cwd: root }).toString())

const person = admin("user", "create", "--email", `probe-${randomBytes(4).toString("hex")}@example.test`, "--name", "Probe")
const session: string = admin("session", "create", "--user", person.id ?? person.user?.id ?? person.userId).token

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

const call = async (method: string, route: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> => {
  const response = await fetch(`${base}${route}`, {
    method,
    redirect: "manual",
    headers: {
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // HTML or empty: kept as text
  }
  return { status: response.status, headers: response.headers, body }
}

const rows: Array<{ readonly finding: string; readonly observed: string; readonly ok: boolean }> = []
const check = (finding: string, ok: boolean, observed: string) => rows.push({ finding, ok, observed })
const count = (answers: ReadonlyArray<Answer>, status: number) => answers.filter((a) => a.status === status).length

const allScopes = ["notifications:send", "interactions:create", "inbox:read", "services:write", "teams:read", "teams:write"]
const agentToken: string = (await call("POST", "/api/app/tokens", { token: session, body: { name: "probe", scopes: allScopes } })).body.secret
await call("POST", "/api/app/devices", { token: session, body: { platform: "ios", pushToken: randomBytes(32).toString("hex"), deviceName: "probe phone" } })

// 1. Registration: a burst from one address, and oversized redirect_uris.
// 8 × 1,900 characters: under the route's 16 KiB body limit, over any sane total for redirect URIs.
const longUris = Array.from({ length: 8 }, (_, i) => `https://client.example/${"a".repeat(1870)}${i}`)
const oversized = await call("POST", "/oauth/register", { body: { redirect_uris: longUris, token_endpoint_auth_method: "none" } })
check("1 redirect_uris of 8 × 1,900 characters", oversized.status === 400, `${oversized.status} ${oversized.body?.error ?? ""}`)
const searchMs = await call("POST", "/oauth/register", { body: { redirect_uris: ["search-ms:query=x"], token_endpoint_auth_method: "none" } })
check("3 an OS-handler scheme (search-ms:)", searchMs.status === 400, `${searchMs.status} ${searchMs.body?.error ?? ""}`)
const burst = await Promise.all(Array.from({ length: 150 }, () =>
  call("POST", "/oauth/register", { body: { redirect_uris: ["https://client.example/cb"], token_endpoint_auth_method: "none" } })))
const registered = count(burst, 201)
check(
  "1 150 registrations at once from one address",
  registered < 150 && count(burst, 429) > 0 && burst.some((a) => a.headers.get("retry-after") !== null),
  `${registered} registered, ${count(burst, 429)} × 429 (${burst.find((a) => a.status === 429)?.body?.error ?? "none"})`
)
check("1 registration answers no-store", burst.find((a) => a.status === 201)?.headers.get("cache-control") === "no-store", String(burst.find((a) => a.status === 201)?.headers.get("cache-control")))

// 3. Open redirect: an invalid request for a client nobody approved answers a page, not a redirect.
const anonymous = burst.find((a) => a.status === 201)?.body
const authorize = await call("GET", `/oauth/authorize?response_type=x&client_id=${anonymous?.client_id}&redirect_uri=${encodeURIComponent("https://client.example/cb")}`)
check("3 response_type=x for an anonymous client", authorize.status === 400 && authorize.headers.get("location") === null, `${authorize.status} location=${authorize.headers.get("location")}`)

// 2. MCP: a JSON-RPC batch of 300 notify calls on a 2025-03-26 session.
const mcpHeaders = { accept: "application/json, text/event-stream" }
const init = await call("POST", "/api/agent/mcp", {
  token: agentToken,
  headers: mcpHeaders,
  body: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "probe", version: "1" } } }
})
const sessionId = init.headers.get("mcp-session-id") ?? ""
await call("POST", "/api/agent/mcp", { token: agentToken, headers: { ...mcpHeaders, "mcp-session-id": sessionId }, body: { jsonrpc: "2.0", method: "notifications/initialized" } })
const batch = Array.from({ length: 300 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "notify", arguments: { title: "probe", body: `batch ${i}` } } }))
const batched = await call("POST", "/api/agent/mcp", { token: agentToken, headers: { ...mcpHeaders, "mcp-session-id": sessionId }, body: batch })
const sent = Array.isArray(batched.body) ? batched.body.filter((m: any) => m.result?.isError === false).length : 0
check("2 MCP batch of 300 notify (2025-03-26)", sent === 0 && batched.status >= 400, `${batched.status}, ${sent} notifications sent`)

// Low findings.
const docs = await call("GET", "/api/agent/docs/")
check(
  "4 /api/agent/docs/ has CSP and charset (or is no page)",
  docs.status === 404 || (docs.headers.get("content-security-policy") !== null && /charset=utf-8/i.test(docs.headers.get("content-type") ?? "")),
  `${docs.status} csp=${docs.headers.get("content-security-policy") !== null} type=${docs.headers.get("content-type")}`
)
await call("GET", `/api/agent/auth/status?access_token=${agentToken}`)
await new Promise((r) => setTimeout(r, 200))
check("4 a secret in a query parameter stays out of the log", !log.includes(agentToken), log.includes(agentToken) ? "logged verbatim" : "redacted")

const tokenCreated = await call("POST", "/api/app/tokens", { token: session, body: { name: "probe 2", scopes: ["notify"] } })
check("4 a new API token answers no-store", tokenCreated.headers.get("cache-control") === "no-store", String(tokenCreated.headers.get("cache-control")))
const serviceCreated = await call("POST", "/api/agent/services", { token: agentToken, body: { title: "probe service" } })
check("4 a new service (its URL) answers no-store", serviceCreated.headers.get("cache-control") === "no-store", `${serviceCreated.status} ${serviceCreated.headers.get("cache-control")}`)

const metrics = await call("GET", "/metrics")
check("4 /metrics: a bearer or a separate listener is offered (docs/operations.md)", true, `${metrics.status} on the API listener with no setting`)

const guesses: Array<Answer> = []
for (let i = 0; i < 1000; i++) {
  const guess = await call("POST", "/api/app/invites/accept", { token: session, body: { code: randomBytes(16).toString("hex") } })
  guesses.push(guess)
  if (guess.status === 429) break
}
check("4 1,000 invite-code guesses", guesses.at(-1)?.status === 429, guesses.at(-1)?.status === 429 ? `429 after ${guesses.length} guesses, Retry-After ${guesses.at(-1)?.headers.get("retry-after")} s` : `no 429 in ${guesses.length} guesses`)

const team = await call("POST", "/api/agent/teams", { token: agentToken, body: { kind: "family", name: "Probe family" } })
const userAgent = "Café ✓"
// The header's UTF-8 bytes over a plain socket, as curl sends them (fetch refuses such a value; node:http re-encodes it).
await new Promise<void>((resolve, reject) => {
  const body = JSON.stringify({ name: "Probe family, renamed" })
  const socket = net.connect(port, "127.0.0.1", () => {
    socket.write(Buffer.concat([
      Buffer.from(`PATCH /api/agent/teams/${team.body?.id} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${agentToken}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nuser-agent: `),
      Buffer.from(userAgent, "utf8"),
      Buffer.from(`\r\n\r\n${body}`)
    ]))
  })
  socket.on("data", () => socket.end())
  socket.on("close", () => resolve())
  socket.on("error", reject)
})
const audit = await call("GET", `/api/agent/teams/${team.body?.id}/audit`, { token: agentToken })
const agents: Array<string> = (audit.body?.entries ?? []).map((e: any) => e.userAgent).filter((u: unknown) => typeof u === "string")
check("4 a UTF-8 User-Agent in the audit log", agents.includes(userAgent), JSON.stringify(agents.slice(0, 3)))

stop()
const width = Math.max(...rows.map((r) => r.finding.length))
for (const row of rows) console.log(`${row.ok ? "ok  " : "FAIL"}  ${row.finding.padEnd(width)}  ${row.observed}`)
const failed = rows.filter((r) => !r.ok).length
console.log(`${rows.length - failed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
