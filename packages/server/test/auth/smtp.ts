/**
 * A real SMTP server (`smtp-server`) on loopback for the sign-in tests: it
 * takes AUTH PLAIN/LOGIN with one user and password (without TLS, as a local
 * relay would) and keeps every mail it receives, decoded enough to read the
 * text (headers, quoted-printable body).
 */
import { Context, Effect, Layer } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
}

export const SMTP_USER = "herald"
export const SMTP_PASSWORD = "p@ss word"

/** Decodes a quoted-printable body (RFC 2045 §6.7): soft line breaks, then `=XX`. */
const decodeQuotedPrintable = (body: string) =>
  Buffer.from(
    body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    "latin1"
  ).toString("utf8")

const parse = (raw: string, from: string, to: ReadonlyArray<string>): ReceivedMail => {
  const split = raw.indexOf("\r\n\r\n")
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ")
  const headers: Record<string, string> = {}
  for (const line of head.split("\r\n")) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  const body = raw.slice(split + 4)
  const encoding = (headers["content-transfer-encoding"] ?? "").toLowerCase()
  const text = encoding === "quoted-printable"
    ? decodeQuotedPrintable(body)
    : encoding === "base64"
    ? Buffer.from(body, "base64").toString("utf8")
    : body
  return { from, to, headers, text: text.replace(/\r\n/g, "\n") }
}

export class Smtp extends Context.Service<Smtp, {
  readonly port: number
  readonly mails: Array<ReceivedMail>
  /** Mails to `address`, in the order received. */
  readonly to: (address: string) => ReadonlyArray<ReceivedMail>
}>()("test/Smtp") {
  static readonly layer = Layer.effect(Smtp, Effect.gen(function*() {
    const mails: Array<ReceivedMail> = []
    const server = new SMTPServer({
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      authMethods: ["PLAIN", "LOGIN"],
      logger: false,
      onAuth: (auth, _session, callback) =>
        auth.username === SMTP_USER && auth.password === SMTP_PASSWORD
          ? callback(null, { user: SMTP_USER })
          : callback(new Error("Invalid username or password")),
      onData: (stream, session, callback) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          const envelope = session.envelope
          mails.push(parse(
            Buffer.concat(chunks).toString("utf8"),
            envelope.mailFrom === false ? "" : envelope.mailFrom.address,
            envelope.rcptTo.map((r) => r.address)
          ))
          callback()
        })
      }
    })
    const port = yield* Effect.acquireRelease(
      Effect.callback<number>((resume) => {
        const listening = server.listen(0, "127.0.0.1", () => resume(Effect.succeed((listening.address() as AddressInfo).port)))
      }),
      () => Effect.callback<void>((resume) => server.close(() => resume(Effect.void)))
    )
    return Smtp.of({ port, mails, to: (address) => mails.filter((m) => m.to.includes(address)) })
  }))
}

/** `HERALD_SMTP_URL` for the test server, with the credentials URL-encoded. */
export const smtpUrl = (port: number) =>
  `smtp://${encodeURIComponent(SMTP_USER)}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${port}`
