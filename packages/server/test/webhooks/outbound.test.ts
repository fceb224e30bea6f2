/**
 * The outbound client against a real local receiver on 127.0.0.1: what a
 * POST carries, which redirects are followed, which targets are refused
 * before any connection, and the time bound. Loopback is only reachable with
 * `allowPrivateNetwork`, so the receiver also proves that refused targets
 * were never contacted.
 */
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as dns from "node:dns"
import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { checkUrl, post } from "../../src/webhooks/Outbound.ts"
import type { OutboundPolicy, OutboundResult } from "../../src/webhooks/Outbound.ts"

const open: OutboundPolicy = { allowPrivateNetwork: true, timeout: Duration.seconds(5), maxRedirects: 3 }
const closed: OutboundPolicy = { ...open, allowPrivateNetwork: false }

interface Received {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

interface Receiver {
  readonly port: number
  readonly received: Array<Received>
}

type Handler = (req: Received, res: http.ServerResponse, port: number) => void

const listen = (server: http.Server) =>
  Effect.callback<number>((resume) => {
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
  })

const close = (server: http.Server) =>
  Effect.callback<void>((resume) => {
    // Drop kept-alive and hanging sockets, or close() would wait for them.
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })

/** A receiver on 127.0.0.1 that records every request in full, then lets `handler` answer; closed with the test's scope. */
const serve = (handler: Handler) =>
  Effect.gen(function*() {
    const received: Array<Received> = []
    let port = 0
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const entry = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString() }
        received.push(entry)
        handler(entry, res, port)
      })
    })
    port = yield* Effect.acquireRelease(listen(server), () => close(server))
    return { port, received } satisfies Receiver
  })

/** Routes for the redirect tests: each path answers one way. */
const routes: Handler = (req, res, port) => {
  const redirect = (status: number, location: string) => res.writeHead(status, { location }).end()
  switch (req.path) {
    case "/error":
      return void res.writeHead(500).end("boom")
    case "/moved":
      return redirect(307, "/ok?after=redirect")
    case "/moved-permanently":
      return redirect(308, `http://127.0.0.1:${port}/ok`)
    case "/loop":
      return redirect(307, "/loop")
    case "/metadata":
      return redirect(307, "http://169.254.169.254/latest")
    case "/found":
      return redirect(302, "/ok")
    case "/see-other":
      return redirect(303, "/ok")
    case "/elsewhere":
      return redirect(307, `http://localhost:${port}/x`)
    default:
      return void res.writeHead(200, { "content-type": "text/plain" }).end("ok")
  }
}

const send = (policy: OutboundPolicy, url: string, headers: Record<string, string> = { "x-herald-test": "1" }) =>
  post(policy, { url, headers, body: "{\"event\":\"ping\"}" })

const reasonOf = (result: OutboundResult) => (result._tag === "Answered" ? "" : result.reason)

describe("outbound webhook POST", () => {
  it.effect("delivers the body and headers and answers the receiver's status", () =>
    Effect.gen(function*() {
      const receiver = yield* serve(routes)
      const base = `http://127.0.0.1:${receiver.port}`

      const ok = yield* send(open, `${base}/hook`)
      expect(ok).toMatchObject({ _tag: "Answered", status: 200 })
      expect(ok.latencyMs).toBeGreaterThan(0)
      const [arrived] = receiver.received
      expect(arrived).toMatchObject({ method: "POST", path: "/hook", body: "{\"event\":\"ping\"}" })
      expect(arrived?.headers).toMatchObject({
        "x-herald-test": "1",
        "content-type": "application/json",
        "user-agent": "Herald-Webhooks/1.0",
        "content-length": "16",
        host: `127.0.0.1:${receiver.port}`
      })

      expect(yield* send(open, `${base}/error`)).toMatchObject({ _tag: "Answered", status: 500 })

      // A caller's content type is kept.
      yield* send(open, `${base}/typed`, { "content-type": "application/cloudevents+json" })
      expect(receiver.received.at(-1)?.headers["content-type"]).toBe("application/cloudevents+json")
    }))

  it.effect("a host resolved to a NAT64 address is judged by the IPv4 it carries but reached at the IPv6 address", () =>
    Effect.gen(function*() {
      const receiver = yield* serve(routes)
      // DNS64 answers the name with 64:ff9b::127.0.0.1: judged as loopback (allowed here), and
      // the connection must go to that IPv6 address, never straight to 127.0.0.1.
      const lookup = vi.spyOn(dns.promises, "lookup").mockImplementation((async () => [{ address: "64:ff9b::7f00:1", family: 6 }]) as never)
      yield* Effect.addFinalizer(() => Effect.sync(() => lookup.mockRestore()))
      const result = yield* send(open, `http://nat64.example.test:${receiver.port}/hook`)
      expect(result._tag).toBe("Failed")
      expect(receiver.received).toEqual([])
      const refused = reasonOf(yield* send(closed, `https://nat64.example.test:${receiver.port}/hook`))
      expect(refused).toMatch(/loopback/)
      // Neither the refusal nor the failed connection tells the caller what the name resolved to.
      for (const reason of [refused, reasonOf(result)]) {
        expect(reason).not.toMatch(/64:ff9b|7f00|127\.0\.0\.1/)
      }
    }))

  it.effect("a host lookup that never answers fails after 5 s (a failure, retried; not a refusal)", () =>
    Effect.gen(function*() {
      const lookup = vi.spyOn(dns.promises, "lookup").mockImplementation((() => new Promise(() => {})) as never)
      yield* Effect.addFinalizer(() => Effect.sync(() => lookup.mockRestore()))
      const attempt = yield* Effect.forkChild(send({ ...closed, timeout: Duration.seconds(10) }, "https://black-hole.example.test/hook"))
      yield* TestClock.adjust(Duration.seconds(5))
      const result = yield* Fiber.join(attempt)
      expect(result._tag).toBe("Failed")
      expect(reasonOf(result)).toBe("the host black-hole.example.test did not resolve within 5 s")
    }))

  it.effect("follows 307/308 on the same host with method and body kept, up to maxRedirects", () =>
    Effect.gen(function*() {
      const receiver = yield* serve(routes)
      const base = `http://127.0.0.1:${receiver.port}`

      expect(yield* send(open, `${base}/moved`)).toMatchObject({ _tag: "Answered", status: 200 })
      expect(receiver.received.map((r) => [r.method, r.path, r.body])).toEqual([
        ["POST", "/moved", "{\"event\":\"ping\"}"],
        ["POST", "/ok?after=redirect", "{\"event\":\"ping\"}"]
      ])

      expect(yield* send(open, `${base}/moved-permanently`)).toMatchObject({ _tag: "Answered", status: 200 })
      expect(receiver.received.at(-1)?.path).toBe("/ok")

      const looped = yield* send(open, `${base}/loop`)
      expect(looped._tag).toBe("Failed")
      // The first request plus maxRedirects followed hops, then no more.
      expect(receiver.received.filter((r) => r.path === "/loop")).toHaveLength(1 + open.maxRedirects)
    }))

  it.effect("does not follow 302/303 or a redirect to another host; refuses a redirect to a forbidden address", () =>
    Effect.gen(function*() {
      const receiver = yield* serve(routes)
      const base = `http://127.0.0.1:${receiver.port}`

      const metadata = yield* send(open, `${base}/metadata`)
      expect(metadata._tag).toBe("Refused")

      const found = yield* send(open, `${base}/found`)
      expect(found._tag).toBe("Failed")
      expect(reasonOf(found)).toContain("302")

      const seeOther = yield* send(open, `${base}/see-other`)
      expect(seeOther._tag).toBe("Failed")
      expect(reasonOf(seeOther)).toContain("303")

      // `localhost` resolves to loopback too, but it is another host name.
      const elsewhere = yield* send(open, `${base}/elsewhere`)
      expect(elsewhere._tag).toBe("Failed")
      expect(reasonOf(elsewhere)).toMatch(/another host/)
      expect(reasonOf(elsewhere)).toContain("307")

      // Only the redirecting requests themselves arrived: no hop was followed.
      expect(receiver.received.map((r) => r.path)).toEqual(["/metadata", "/found", "/see-other", "/elsewhere"])
    }))

  // Live clock: the bound must release a hung socket in real time.
  it.live("bounds the whole attempt by the policy's timeout and aborts the request", () =>
    Effect.gen(function*() {
      const aborted = Promise.withResolvers<void>()
      const receiver = yield* serve((_req, res) => res.on("close", () => aborted.resolve()))
      const started = performance.now()
      const result = yield* send({ ...open, timeout: Duration.millis(300) }, `http://127.0.0.1:${receiver.port}/`)
      expect(result._tag).toBe("Failed")
      expect(reasonOf(result)).toContain("timed out")
      expect(reasonOf(result)).toContain("300 ms")
      expect(result.latencyMs).toBeGreaterThanOrEqual(290)
      expect(performance.now() - started).toBeLessThan(2000)
      // The receiver sees the connection dropped: the request was destroyed, not left hanging.
      yield* Effect.promise(() => aborted.promise)
    }))
})

/** Each URL is refused (never connected to) under the policy, and refused by checkUrl too. */
const expectRefused = (policy: OutboundPolicy, urls: ReadonlyArray<string>) =>
  Effect.forEach(urls, (url) =>
    Effect.gen(function*() {
      expect((yield* send(policy, url))._tag, url).toBe("Refused")
      expect(yield* Effect.flip(checkUrl(policy, url)), url).toEqual(expect.any(String))
    }), { discard: true })

describe("outbound SSRF rules", () => {
  it.effect("without allowPrivateNetwork, private, loopback and metadata targets are refused before connecting", () =>
    Effect.gen(function*() {
      const receiver = yield* serve(routes)
      const targets = [
        "https://10.1.2.3/",
        "https://172.16.5.5/",
        "https://192.168.1.1/",
        "https://100.64.0.1/",
        `http://127.0.0.1:${receiver.port}/`,
        `https://127.0.0.1:${receiver.port}/`,
        "https://127.0.0.1/",
        "https://localhost/",
        `https://localhost:${receiver.port}/`,
        "https://[::1]/",
        "https://[fc00::1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://[::ffff:a00:1]/",
        "https://[64:ff9b::7f00:1]/",
        "https://[64:ff9b::10.0.0.1]/",
        "https://[64:ff9b:1::a00:1]/",
        "https://169.254.169.254/"
      ]
      yield* expectRefused(closed, targets)
      expect(receiver.received).toEqual([])
    }))

  it.effect("link-local, metadata, multicast, broadcast and unspecified targets are refused even with allowPrivateNetwork", () =>
    Effect.gen(function*() {
      const targets = [
        "https://169.254.169.254/",
        "http://169.254.169.254/latest",
        "https://[::ffff:169.254.169.254]/",
        "https://[fe80::1]/",
        "https://[fd00:ec2::254]/",
        "https://100.100.100.200/",
        "https://224.0.0.1/",
        "https://[ff02::1]/",
        "https://255.255.255.255/",
        "https://240.0.0.1/",
        "https://0.0.0.0/",
        "https://[::]/",
        "https://[64:ff9b::a9fe:a9fe]/",
        "https://[64:ff9b::169.254.169.254]/",
        "https://[::ffff:a9fe:a9fe]/"
      ]
      yield* expectRefused(open, targets)
      // A public IPv4 host behind DNS64/NAT64 stays reachable.
      yield* checkUrl(open, "https://[64:ff9b::808:808]/")
      yield* checkUrl(closed, "https://[64:ff9b::808:808]/")
    }))

  it.effect("checkUrl refuses bad URLs at save time and accepts good ones", () =>
    Effect.gen(function*() {
      const refused = (policy: OutboundPolicy, url: string) => Effect.flip(checkUrl(policy, url))

      // Plain http is refused before any lookup.
      expect(yield* refused(closed, "http://example.com/")).toMatch(/https/)
      expect(yield* refused(open, "https://user:secret@127.0.0.1/")).toMatch(/credentials/)
      expect(yield* refused(open, "ftp://127.0.0.1/")).toEqual(expect.any(String))
      expect(yield* refused(open, "not a url")).toEqual(expect.any(String))
      expect(yield* refused(open, `https://127.0.0.1/${"a".repeat(2048)}`)).toMatch(/2048/)
      // http with the switch on, but not to loopback.
      expect(yield* refused(open, "http://10.0.0.1/")).toMatch(/https/)

      // http with the switch on, to a name: no lookup at save time, so only a localhost name is known loopback.
      expect(yield* refused(open, "http://example.com/")).toMatch(/https/)
      yield* checkUrl(open, "http://localhost:8080/hook")
      // localhost and every name under it are loopback (RFC 6761), without asking a resolver.
      expect(yield* refused(closed, "https://localhost/")).toMatch(/loopback/)
      expect(yield* refused(closed, "https://api.localhost./")).toMatch(/loopback/)

      yield* checkUrl(closed, "https://93.184.215.14/hook")
      yield* checkUrl(open, "http://127.0.0.1:8080/hook")
      yield* checkUrl(open, "https://10.0.0.1/hook")
    }))

  it.effect("checkUrl never asks DNS: a name that does not resolve is accepted, and fails at send", () =>
    Effect.gen(function*() {
      const lookup = vi.spyOn(dns.promises, "lookup")
      yield* Effect.addFinalizer(() => Effect.sync(() => lookup.mockRestore()))
      yield* checkUrl(closed, "https://does-not-resolve.invalid/hook")
      yield* checkUrl(closed, "https://hooks.example.com/hook")
      expect(lookup).not.toHaveBeenCalled()
      const result = yield* send(closed, "https://does-not-resolve.invalid/hook")
      expect(result._tag).toBe("Failed")
      expect(reasonOf(result)).toMatch(/does-not-resolve\.invalid does not resolve/)
      expect(lookup).toHaveBeenCalledOnce()
    }))
})
