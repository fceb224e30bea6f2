/**
 * Requests the typed client and `fetch` cannot send: a path exactly as
 * written (`fetch` resolves `.` and `..` segments), or a body that is
 * declared but never finished.
 */
import { Effect } from "effect"
import * as http from "node:http"
import { TestServer } from "../../../../test/support/server.ts"

export interface RawAnswer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: unknown
}

export interface RawRequest {
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: string
  /**
   * Declares a `Content-Length` of this many bytes but sends only `body` and
   * never finishes: an answer can then only come from a server that did not
   * wait for the body.
   */
  readonly declaredLength?: number
}

/** Sends one request to the test server over node:http and reads the whole answer. */
export const rawRequest = (request: RawRequest) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.callback<RawAnswer>((resume) => {
      const body = request.body ?? ""
      const req = http.request({
        host: "127.0.0.1",
        port: Number(new URL(baseUrl).port),
        method: request.method,
        path: request.path,
        agent: false,
        headers: { ...request.headers, "content-length": String(request.declaredLength ?? Buffer.byteLength(body)) }
      }, (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => {
          let parsed: unknown = text
          try {
            parsed = JSON.parse(text)
          } catch {
            // not JSON: the test asserts on the text
          }
          // An unfinished request is dropped once answered.
          req.destroy()
          resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body: parsed }))
        })
      })
      req.on("error", (error) => resume(Effect.die(error)))
      if (request.declaredLength === undefined) req.end(body)
      else req.write(body)
      return Effect.sync(() => req.destroy())
    }))
