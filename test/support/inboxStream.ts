/**
 * Reading GET /api/app/inbox/stream as a browser does: one long fetch whose
 * body is parsed into server-sent-event frames as it arrives. Tests wait on
 * the frames with `eventually`, never a sleep; the connection is aborted when
 * the test's scope closes.
 */
import { Effect } from "effect"
import { TestServer } from "./server.ts"

/** One frame: an event (`event`, `data`) or a comment (`comment`). */
export interface Frame {
  readonly event?: string
  readonly data?: string
  readonly comment?: string
}

export interface OpenedStream {
  readonly status: number
  readonly headers: Headers
  /** The body when the answer was not a stream (a refusal). */
  readonly body: unknown
  /** Every frame so far, oldest first. */
  readonly frames: ReadonlyArray<Frame>
  /** The inbox ids of the `item` events so far. */
  readonly items: () => ReadonlyArray<string>
  /** True once the server ended the body. */
  readonly ended: () => boolean
  readonly close: Effect.Effect<void>
}

const parse = (block: string): Frame => {
  const frame: { event?: string; data?: string; comment?: string } = {}
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) frame.comment = line.slice(1).trim()
    else if (line.startsWith("event:")) frame.event = line.slice(6).trim()
    else if (line.startsWith("data:")) frame.data = (frame.data === undefined ? "" : `${frame.data}\n`) + line.slice(5).trim()
  }
  return frame
}

/** Opens the person's stream on the server at `baseUrl` (or answers the refusal); aborted when the scope closes. */
export const openStreamAt = (baseUrl: string, session: string, init: RequestInit = {}) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<OpenedStream> => {
      const controller = new AbortController()
      const response = await fetch(`${baseUrl}/api/app/inbox/stream`, {
        ...init,
        headers: { authorization: `Bearer ${session}`, ...(init.headers as Record<string, string> | undefined) },
        signal: controller.signal
      })
      const frames: Array<Frame> = []
      let ended = false
      const close = Effect.sync(() => controller.abort())
      const base = {
        status: response.status,
        headers: response.headers,
        frames,
        items: () => frames.filter((f) => f.event === "item").map((f) => (JSON.parse(f.data!) as { id: string }).id),
        ended: () => ended,
        close
      }
      if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        const text = await response.text()
        ended = true
        return { ...base, body: text === "" ? null : JSON.parse(text) }
      }
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
      void (async () => {
        let buffer = ""
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            buffer += value
            let at: number
            while ((at = buffer.indexOf("\n\n")) >= 0) {
              frames.push(parse(buffer.slice(0, at)))
              buffer = buffer.slice(at + 2)
            }
          }
        } catch {
          // aborted by the test
        }
        ended = true
      })()
      return { ...base, body: null }
    }),
    (stream) => stream.close
  )

/** Opens the person's stream on the in-process test server. */
export const openStream = (session: string, init: RequestInit = {}) =>
  Effect.flatMap(TestServer, ({ baseUrl }) => openStreamAt(baseUrl, session, init))
