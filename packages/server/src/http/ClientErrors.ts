/**
 * Requests Node cannot parse (a header line without a colon, a malformed
 * `Content-Length`, headers over the size limit) never reach the router:
 * Node answers them itself with a bare status line. This gives them the
 * spec's `{error, code}` body and a request id like every other answer.
 */
import { randomUUID } from "node:crypto"
import type { Server } from "node:http"
import type { Duplex } from "node:stream"

const answers = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "REQUEST_HEADER_FIELDS_TOO_LARGE", "The request's headers are too large."],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "Payload Too Large", "PAYLOAD_TOO_LARGE", "The request's chunk extensions are too large."],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "REQUEST_TIMEOUT", "The request was not received in time."]
} as const
const malformed = [400, "Bad Request", "BAD_REQUEST", "The request could not be read."] as const

const answer = (error: Error & { readonly code?: string }, socket: Duplex & { readonly _httpMessage?: { readonly headersSent?: boolean } }) => {
  // A peer that went away, or a response already under way on this socket
  // (a bad pipelined request behind it): nothing can be said, as Node decides.
  if (error.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent === true) return socket.destroy()
  const [status, reason, code, message] = answers[error.code as keyof typeof answers] ?? malformed
  const body = JSON.stringify({ error: message, code })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${randomUUID()}\r\nconnection: close\r\n\r\n${body}`
  )
}

export const answerClientErrors = <S extends Server>(server: S): S => server.on("clientError", answer)
