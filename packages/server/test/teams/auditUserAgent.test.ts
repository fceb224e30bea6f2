/**
 * The audit log stores the `User-Agent` its caller sent (issue 30): a UTF-8
 * value such as `Café ✓` reads back as `Café ✓`, not as Node's Latin-1
 * reading of its bytes (`CafÃ©…`); bytes that are not UTF-8 read as U+FFFD.
 * Sent as raw bytes over a socket (`fetch` refuses non-ASCII header values)
 * and read back through the API.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as net from "node:net"
import { personClient, TestServer, TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"
import { rawRequest } from "../http/rawHttp.ts"

/**
 * PATCHes the team over a plain socket with these exact User-Agent bytes
 * (node:http re-encodes header text as UTF-8 when it joins it to a body) and
 * answers the status.
 */
const renameWithUserAgent = (teamId: string, secret: string, userAgent: Buffer, name: string) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.callback<number>((resume) => {
      const body = Buffer.from(JSON.stringify({ name }), "utf8")
      const head = Buffer.from(
        `PATCH /api/agent/teams/${teamId} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${secret}\r\n` +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\nuser-agent: `,
        "latin1"
      )
      const socket = net.connect(Number(new URL(baseUrl).port), "127.0.0.1", () => {
        socket.write(Buffer.concat([head, userAgent, Buffer.from("\r\n\r\n", "latin1"), body]))
      })
      const chunks: Array<Buffer> = []
      socket.on("data", (chunk: Buffer) => chunks.push(chunk))
      socket.on("end", () => resume(Effect.succeed(Number(/^HTTP\/1\.1 (\d{3})/u.exec(Buffer.concat(chunks).toString("latin1"))?.[1] ?? 0))))
      socket.on("error", (error) => resume(Effect.die(error)))
      return Effect.sync(() => socket.destroy())
    }))

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("audit user agent", (it) => {
  it.effect("a UTF-8 User-Agent is stored as sent; bytes that are not UTF-8 as replacement characters", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const app = yield* personClient(owner.session)
      const { secret } = yield* app.tokens.create({ payload: { name: "ua", scopes: ["teams:read", "teams:write"] } })
      const sent: ReadonlyArray<readonly [wire: Buffer, stored: string]> = [
        [Buffer.from("Café ✓", "utf8"), "Café ✓"],
        [Buffer.from("Agent/1.0 (日本語; 😀)", "utf8"), "Agent/1.0 (日本語; 😀)"],
        // Latin-1 é alone is no UTF-8: never guessed, shown as U+FFFD.
        [Buffer.from([0x43, 0x61, 0x66, 0xe9]), "Caf\uFFFD"],
        [Buffer.from("plain-ascii/2.0", "utf8"), "plain-ascii/2.0"]
      ]
      for (const [i, [wire]] of sent.entries()) {
        assert.strictEqual(yield* renameWithUserAgent(teamId, secret, wire, `Renamed ${i}`), 200)
      }
      const page = yield* rawRequest({
        method: "GET",
        path: `/api/agent/teams/${teamId}/audit?action=team.renamed`,
        headers: { authorization: `Bearer ${secret}` }
      })
      assert.strictEqual(page.status, 200)
      const items = (page.body as { entries: Array<{ userAgent: string | null }> }).entries
      // Newest first.
      assert.deepStrictEqual(items.map((e) => e.userAgent).reverse(), sent.map(([, stored]) => stored))
    }))
})
