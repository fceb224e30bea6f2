/**
 * The HTTP baseline, as fast as Node goes: raw node:http answering GET with a
 * fixed JSON body (an auth status) and POST by echoing the JSON it was sent.
 */
import { createServer } from "node:http"

const body = JSON.stringify({
  authenticated: true,
  userId: "usr_01jbench0000000000000000",
  token: { id: "tok_01jbench0000000000000000", name: "bench", prefix: "hld_AbCdEfGh", scopes: [], createdAt: "2026-01-01T00:00:00.000Z", lastUsedAt: null, expiresAt: null }
})
const port = Number(process.argv[2] ?? 0)
const server = createServer((req, res) => {
  if (req.method === "POST") {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const echoed = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(echoed) })
      res.end(echoed)
    })
    return
  }
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
})
server.keepAliveTimeout = 65_000
server.listen(port, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : port}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
