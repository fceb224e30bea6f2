/**
 * The floor under `POST /api/agent/notifications`: the least work the
 * contract's durable outbox asks for, written with raw node:http and raw `pg`
 * (no Effect, no schema, no logging or metrics), with the same group commit as
 * Herald (concurrent requests share each statement). Per notification:
 *
 * 1. read the account's active devices;
 * 2. commit the notification and one `pending` receipt per device, before any
 *    answer (a crash loses nothing);
 * 3. commit the claim (`sending`) before the provider call (no receipt reaches
 *    the provider twice);
 * 4. the provider: the sandbox's record of each push (what Herald's sandbox
 *    provider writes);
 * 5. commit each provider's answer, then answer 201 with the accepted count.
 *
 * The tables and statements are floor-sql.ts, shared with the floor on
 * Herald's stack (notifications-effect-floor.ts). No inbox copy, feed entry,
 * idempotency, rate limit or alert-size rule: it is a floor, not Herald.
 *
 * argv: databaseUrl port (0 = any); prints the port, then serves.
 */
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import pg from "pg"
import { floorMessage, floorSetup, floorSql, floorToken, floorUserId } from "./floor-sql.ts"

const [url, portArg] = process.argv.slice(2)
// Connections stay open between loads, as a server's pool does (and so their CPU can be read).
const pool = new pg.Pool({ connectionString: url!, max: 10, idleTimeoutMillis: 0, application_name: "herald-floor" })
const token = `Bearer ${floorToken}`
const userId = floorUserId

for (const statement of floorSetup) await pool.query(statement)

/** Calls made in the same turn of the event loop share one `run` (Herald's group commit). */
const batched = <I, O>(run: (inputs: Array<I>) => Promise<Array<O>>) => {
  let waiting: Array<{ input: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = []
  const flush = () => {
    const batch = waiting
    waiting = []
    run(batch.map((w) => w.input)).then(
      (outputs) => batch.forEach((w, i) => w.resolve(outputs[i]!)),
      (error) => batch.forEach((w) => w.reject(error))
    )
  }
  return (input: I) =>
    new Promise<O>((resolve, reject) => {
      if (waiting.push({ input, resolve, reject }) === 1) setImmediate(flush)
    })
}

interface Device { readonly id: string; readonly user_id: string; readonly platform: string }
interface Receipt { readonly id: string; readonly item_id: string; readonly device_id: string; readonly message: unknown }
interface Draft { readonly id: string; readonly title: string; readonly body: string; readonly url: string | null }

const devicesOf = batched(async (users: Array<string>) => {
  const { rows } = await pool.query<Device>(floorSql.devices, [[...new Set(users)]])
  return users.map((u) => rows.filter((d) => d.user_id === u))
})

const commit = batched(async (drafts: Array<{ draft: Draft; receipts: Array<Receipt> }>) => {
  await pool.query(floorSql.commit, [JSON.stringify(drafts.map((d) => d.draft)), JSON.stringify(drafts.flatMap((d) => d.receipts)), userId])
  return drafts.map(() => undefined)
})

const claim = batched(async (lists: Array<Array<string>>) => {
  const { rows } = await pool.query<Receipt>(floorSql.claim, [lists.flat()])
  const byId = new Map(rows.map((r) => [r.id, r]))
  return lists.map((ids) => ids.flatMap((id) => byId.get(id) ?? []))
})

// The sandbox provider: it records what it would have sent.
const deliver = batched(async (receipts: Array<Receipt>) => {
  const deliveries = receipts.map((r) => ({ id: `sbx_${randomUUID()}`, device_id: r.device_id, payload: r.message }))
  await pool.query(floorSql.deliver, [JSON.stringify(deliveries)])
  return deliveries.map((d) => d.id)
})

const record = batched(async (answers: Array<{ id: string; providerId: string }>) => {
  await pool.query(floorSql.record, [JSON.stringify(answers.map((a) => ({ id: a.id, provider_id: a.providerId }))), answers.map((a) => a.id)])
  return answers.map(() => undefined)
})

const send = async (input: { title: string; body: string; url?: string }) => {
  const devices = await devicesOf(userId)
  const draft: Draft = { id: `anot_${randomUUID()}`, title: input.title, body: input.body, url: input.url ?? null }
  const message = floorMessage(draft)
  const receipts = devices.map((d) => ({ id: `rcp_${randomUUID()}`, item_id: draft.id, device_id: d.id, message }))
  await commit({ draft, receipts })
  const claimed = await claim(receipts.map((r) => r.id))
  const accepted = await Promise.all(claimed.map(async (r) => {
    const providerId = await deliver(r)
    await record({ id: r.id, providerId })
  }))
  return { notification: { ...draft, createdAt: new Date().toISOString() }, accepted: accepted.length }
}

const answer = (res: import("node:http").ServerResponse, status: number, value: unknown) => {
  const text = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const server = createServer((req, res) => {
  if (req.method !== "POST" || req.headers.authorization !== token) return answer(res, 401, { error: "Unauthorized" })
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    let input: { title?: unknown; body?: unknown; url?: unknown }
    try {
      input = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return answer(res, 400, { error: "Invalid JSON" })
    }
    if (typeof input.title !== "string" || typeof input.body !== "string") return answer(res, 400, { error: "title and body" })
    send({ title: input.title, body: input.body, ...(typeof input.url === "string" ? { url: input.url } : {}) }).then(
      (created) => answer(res, 201, created),
      (error) => answer(res, 500, { error: String(error) })
    )
  })
})
server.keepAliveTimeout = 65_000
server.listen(Number(portArg ?? 0), "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : portArg}\n`)
})
process.on("SIGTERM", () => server.close(() => pool.end().then(() => process.exit(0))))
