/**
 * A listener's close that does not wait on its clients. Node's `server.close()`
 * drops the keep-alive connections idle at that moment, but one whose response
 * is still being written is left open once that response ends, and the close
 * then waits until the client drops it: about 5 s with Node's `fetch` (undici's
 * keep-alive), measured in about one stop in five of `herald serve` polled on /readyz
 * and signalled at once. Here every response that ends after the close began
 * ends its connection too, as a server going away says with `Connection: close`.
 */
import type { Server, ServerResponse } from "node:http"
import type { Socket } from "node:net"

type HttpSocket = Socket & { readonly _httpMessage?: ServerResponse | null }

export const closePromptly = <S extends Server>(server: S): S => {
  const sockets = new Set<HttpSocket>()
  server.on("connection", (socket: HttpSocket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  })
  const close = server.close.bind(server)
  const node: Server = server
  node.close = (callback) => {
    // A request that arrives from here on is answered with `Connection: close`.
    server.prependListener("request", (_request, response: ServerResponse) => {
      response.shouldKeepAlive = false
    })
    for (const socket of sockets) {
      // The response under way on a socket (Node's own test of idleness; it is detached once done): its connection ends with it.
      const response = socket._httpMessage
      if (response == null) continue
      if (response.writableFinished) socket.end()
      else response.once("finish", () => socket.end())
    }
    close(callback)
    return node
  }
  return server
}
