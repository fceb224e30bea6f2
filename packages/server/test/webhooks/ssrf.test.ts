/**
 * The outbound client's SSRF rules, against a local receiver: addresses by
 * literal, by name and IPv4-mapped; plain HTTP; redirects (followed on the
 * same host, refused to a forbidden address, not followed across hosts);
 * and the attempt's time bound.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as http from "node:http"
import { checkUrl, post } from "../../src/webhooks/Outbound.ts"
import type { OutboundPolicy } from "../../src/webhooks/Outbound.ts"

const open: OutboundPolicy = { allowPrivateNetwork: true, timeout: Duration.seconds(5), maxRedirects: 3 }
const closed: OutboundPolicy = { ...open, allowPrivateNetwork: false }

/** A receiver whose handler decides each answer; counts what arrives. */
const serve = (handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly port: number; readonly hits: Array<string>; readonly server: http.Server }>((resume) => {
      const hits: Array<string> = []
      const server = http.createServer((req, res) => {
        hits.push(req.url ?? "/")
        req.resume()
        req.on("end", () => handler(req, res))
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ port: (server.address() as { port: number }).port, hits, server })))
    }),
    ({ server }) => Effect.sync(() => server.closeAllConnections()).pipe(Effect.andThen(Effect.callback<void>((r) => {
      server.close(() => r(Effect.void))
    })))
  )

const send = (policy: OutboundPolicy, url: string) => post(policy, { url, headers: { "x-test": "1" }, body: "{}" })

describe("outbound SSRF rules", () => {
  it.live("refuses forbidden addresses before connecting, with or without the private-network switch", () =>
    Effect.scoped(Effect.gen(function*() {
      const local = yield* serve((_, res) => res.end())
      for (const url of [
        "https://10.1.2.3/",
        "https://172.16.5.5/",
        `http://127.0.0.1:${local.port}/`,
        "https://127.0.0.1/",
        "https://localhost/",
        "https://[::1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:a9fe:a9fe]/",
        "https://169.254.169.254/",
        "https://0.0.0.0/"
      ]) {
        const result = yield* send(closed, url)
        assert.strictEqual(result._tag, "Refused", url)
      }
      for (const url of ["https://169.254.169.254/latest", "https://[fe80::1]/", "https://[::ffff:169.254.169.254]/", "https://224.0.0.1/"]) {
        assert.strictEqual((yield* send(open, url))._tag, "Refused", url)
      }
      assert.lengthOf(local.hits, 0)
      assert.include(yield* Effect.flip(checkUrl(closed, "http://example.com/")), "https://")
      assert.include(yield* Effect.flip(checkUrl(open, "https://user:pw@example.com/")), "credentials")
    })))

  it.live("posts to an allowed target and answers its status; follows a same-host 307 and re-vets every hop", () =>
    Effect.scoped(Effect.gen(function*() {
      const local = yield* serve((req, res) => {
        if (req.url === "/moved") {
          res.writeHead(307, { location: "/final" })
        } else if (req.url === "/metadata") {
          res.writeHead(308, { location: "http://169.254.169.254/latest/meta-data" })
        } else if (req.url === "/elsewhere") {
          res.writeHead(307, { location: `http://localhost:${(req.socket.localPort ?? 0)}/final` })
        } else if (req.url === "/found") {
          res.writeHead(302, { location: "/final" })
        } else {
          res.writeHead(req.url === "/fail" ? 500 : 204)
        }
        res.end()
      })
      const base = `http://127.0.0.1:${local.port}`
      const ok = yield* send(open, `${base}/final`)
      assert.deepStrictEqual([ok._tag, ok._tag === "Answered" ? ok.status : 0], ["Answered", 204])
      const failing = yield* send(open, `${base}/fail`)
      assert.deepStrictEqual([failing._tag, failing._tag === "Answered" ? failing.status : 0], ["Answered", 500])
      const moved = yield* send(open, `${base}/moved`)
      assert.deepStrictEqual([moved._tag, moved._tag === "Answered" ? moved.status : 0], ["Answered", 204])
      assert.deepStrictEqual(local.hits.slice(-2), ["/moved", "/final"])

      const metadata = yield* send(open, `${base}/metadata`)
      assert.strictEqual(metadata._tag, "Refused")
      const elsewhere = yield* send(open, `${base}/elsewhere`)
      assert.strictEqual(elsewhere._tag, "Failed")
      assert.match(elsewhere._tag === "Failed" ? elsewhere.reason : "", /another host/)
      const found = yield* send(open, `${base}/found`)
      assert.match(found._tag === "Failed" ? found.reason : "", /not followed \(HTTP 302\)/)
      // Only the direct request and the followed 307 reached /final.
      assert.strictEqual(local.hits.filter((h) => h === "/final").length, 2)
    })))

  it.live("bounds the whole attempt in time", () =>
    Effect.scoped(Effect.gen(function*() {
      const silent = yield* serve(() => {
        // never answers
      })
      const result = yield* send({ ...open, timeout: Duration.millis(300) }, `http://127.0.0.1:${silent.port}/`)
      assert.strictEqual(result._tag, "Failed")
      assert.match(result._tag === "Failed" ? result.reason : "", /timed out after 300 ms/)
      assert.isBelow(result.latencyMs, 1000)
    })))
})
