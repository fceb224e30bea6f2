/**
 * A real DNS server on loopback (UDP, `node:dgram` + `dns-packet`) for tests
 * that resolve through `node:dns`: answers TXT questions from a map the test
 * changes as it goes, and can answer a name with NXDOMAIN, SERVFAIL or
 * silence (the resolver times out). It counts the questions it receives per
 * name, so a test can prove an answer came from a cache.
 *
 * Names are matched lowercased. A name with no entry answers NXDOMAIN; a name
 * mapped to an empty list exists with no TXT record (NOERROR, no answer).
 */
import { Context, Effect, Layer } from "effect"
import * as dgram from "node:dgram"
import dnsPacket from "dns-packet"

export type DnsBehavior = "answer" | "nxdomain" | "servfail" | "silent"

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const

export interface TestDnsServer {
  readonly host: string
  readonly port: number
  /** Publishes `values` as the TXT records of `name` (replacing any). */
  readonly setTxt: (name: string, values: ReadonlyArray<string>) => void
  /** Removes `name`: it answers NXDOMAIN again. */
  readonly remove: (name: string) => void
  /** How `name` is answered: from the map (`answer`, the default), or NXDOMAIN, SERVFAIL, or not at all. */
  readonly behave: (name: string, behavior: DnsBehavior) => void
  /** Questions received for `name` so far. */
  readonly queries: (name: string) => number
}

export class TestDns extends Context.Service<TestDns, TestDnsServer>()("test/TestDns") {
  /** A server on 127.0.0.1 at a free port, closed with the layer. */
  static readonly layer = Layer.effect(TestDns, Effect.acquireRelease(
    Effect.callback<{ readonly socket: dgram.Socket; readonly server: TestDnsServer }>((resume) => {
      const records = new Map<string, ReadonlyArray<string>>()
      const behaviors = new Map<string, DnsBehavior>()
      const counts = new Map<string, number>()
      const socket = dgram.createSocket("udp4")

      socket.on("message", (message, peer) => {
        let query: dnsPacket.DecodedPacket
        try {
          query = dnsPacket.decode(message)
        } catch {
          return
        }
        const question = query.questions?.[0]
        if (question === undefined) return
        const name = question.name.toLowerCase()
        counts.set(name, (counts.get(name) ?? 0) + 1)
        const behavior = behaviors.get(name) ?? "answer"
        if (behavior === "silent") return
        const values = records.get(name)
        const rcode = behavior === "servfail"
          ? RCODE.SERVFAIL
          : behavior === "nxdomain" || values === undefined
          ? RCODE.NXDOMAIN
          : RCODE.NOERROR
        const answers: Array<dnsPacket.Answer> = rcode === RCODE.NOERROR && question.type === "TXT"
          ? (values ?? []).map((value) => ({ type: "TXT", class: "IN", name: question.name, ttl: 0, data: value }))
          : []
        const response = dnsPacket.encode({
          type: "response",
          id: query.id ?? 0,
          flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
          questions: query.questions ?? [],
          answers
        })
        socket.send(response, peer.port, peer.address)
      })

      socket.once("error", (error) => resume(Effect.die(error)))
      socket.bind(0, "127.0.0.1", () => {
        const key = (name: string) => name.toLowerCase()
        resume(Effect.succeed({
          socket,
          server: {
            host: "127.0.0.1",
            port: socket.address().port,
            setTxt: (name, values) => void records.set(key(name), [...values]),
            remove: (name) => void records.delete(key(name)),
            behave: (name, behavior) => void behaviors.set(key(name), behavior),
            queries: (name) => counts.get(key(name)) ?? 0
          }
        }))
      })
    }),
    ({ socket }) => Effect.callback<void>((resume) => void socket.close(() => resume(Effect.void)))
  ).pipe(Effect.map(({ server }) => server)))
}
