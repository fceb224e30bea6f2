/**
 * A listener closed while a response is still being written (runtime/PromptClose.ts):
 * the response arrives whole, its keep-alive connection ends with it, and the close
 * completes without the client dropping the connection. The client's agent keeps
 * idle sockets open and the server's keep-alive is 65 s, so without the fix the
 * close waits past the test's timeout (checked: it fails so).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { closePromptly } from "../../src/runtime/PromptClose.ts"

const get = (port: number, agent: http.Agent) =>
  new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }))
    }).on("error", reject)
  })

describe("closePromptly", () => {
  it.effect("a response under way when the close begins is sent whole, then its kept-alive connection ends and the close completes", () =>
    Effect.promise(async () => {
      let release: () => void = () => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      let arrived: () => void = () => {}
      const received = new Promise<void>((resolve) => (arrived = resolve))
      const server = closePromptly(http.createServer({ keepAliveTimeout: 65_000 }, (_req, res) => {
        arrived()
        void held.then(() => res.end("done"))
      }))
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const { port } = server.address() as AddressInfo
      const agent = new http.Agent({ keepAlive: true })
      try {
        const answer = get(port, agent)
        await received
        const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
        release()
        const response = await answer
        assert.deepStrictEqual([response.status, response.body], [200, "done"])
        await closed
        assert.isFalse(server.listening)
      } finally {
        agent.destroy()
        server.closeAllConnections()
      }
    }))
})
