/**
 * A plain round-robin balancer on loopback, as an operator's nginx in front of
 * Herald would be: each request (not each connection) goes to the next
 * upstream in turn, with no affinity of any kind; an upstream that refuses the
 * connection is skipped for that request (nginx's `proxy_next_upstream error`),
 * nothing else is retried. Answers stream through as they come (SSE included).
 * Closed with the scope.
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Balancer {
  readonly url: string
  /** The upstreams (base URLs) to alternate over; settable once the nodes' addresses are known. */
  readonly route: (upstreams: ReadonlyArray<string>) => void
  /** The upstream that answered the latest request. */
  readonly last: () => string | undefined
  /** How many requests each upstream answered. */
  readonly served: () => ReadonlyMap<string, number>
}

/** Hop-by-hop headers a proxy does not pass on. */
const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "upgrade", "te", "trailer"])

const passOn = (headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !hopByHop.has(name.toLowerCase())))

export const roundRobin = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ server: http.Server; balancer: Balancer }>((resolve) => {
      let upstreams: ReadonlyArray<string> = []
      let next = 0
      let last: string | undefined
      const served = new Map<string, number>()
      const agent = new http.Agent({ keepAlive: true })

      const forward = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, tries: number) => {
        const upstream = upstreams[next++ % upstreams.length]!
        const target = new URL(upstream)
        const out = http.request({
          agent,
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...passOn(req.headers), host: target.host }
        }, (answer) => {
          last = upstream
          served.set(upstream, (served.get(upstream) ?? 0) + 1)
          res.writeHead(answer.statusCode ?? 502, passOn(answer.headers))
          answer.pipe(res)
        })
        out.on("error", (error: NodeJS.ErrnoException) => {
          if (res.headersSent) return res.destroy()
          if (error.code === "ECONNREFUSED" && tries + 1 < upstreams.length) return forward(req, res, body, tries + 1)
          res.writeHead(502, { "content-type": "text/plain" }).end(`upstream ${upstream}: ${error.message}`)
        })
        // The client hung up: so does the upstream request (a long-poll's wait ends with it).
        res.on("close", () => {
          if (!res.writableFinished) out.destroy()
        })
        out.end(body)
      }

      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          if (upstreams.length === 0) return res.writeHead(503).end("no upstreams")
          forward(req, res, Buffer.concat(chunks), 0)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resolve({
          server,
          balancer: {
            url: `http://127.0.0.1:${port}`,
            route: (list) => {
              upstreams = [...list]
            },
            last: () => last,
            served: () => served
          }
        })
      })
    })),
  ({ server }) =>
    Effect.promise(() =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }))
).pipe(Effect.map(({ balancer }) => balancer))
