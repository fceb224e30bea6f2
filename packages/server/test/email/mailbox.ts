/**
 * A real SMTP server (`smtp-server`, no auth, loopback) for the e-mail channel's
 * tests, keeping each mail parsed by `mailparser`; helpers to read the links
 * a mail carries and to open them as a browser would (no redirects followed).
 */
import { Context, Effect, Layer } from "effect"
import { simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { eventually } from "../../../../test/support/eventually.ts"
import { TestServer } from "../../../../test/support/server.ts"

export interface Parsed {
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly messageId: string
  readonly text: string
}

/** An SMTP server on 127.0.0.1 keeping every mail, parsed. */
export const startMailbox = () =>
  Effect.acquireRelease(
    Effect.callback<{ readonly port: number; readonly mails: Array<Parsed>; readonly server: SMTPServer }>((resume) => {
      const mails: Array<Parsed> = []
      const server = new SMTPServer({
        disabledCommands: ["STARTTLS", "AUTH"],
        logger: false,
        onData: (stream, session, callback) => {
          const to = session.envelope.rcptTo.map((r) => r.address)
          simpleParser(stream).then((mail) => {
            mails.push({ to, subject: mail.subject ?? "", messageId: mail.messageId ?? "", text: mail.text ?? "" })
            callback()
          }, (error: Error) => callback(error))
        }
      })
      const listening = server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ port: (listening.address() as AddressInfo).port, mails, server })))
    }),
    ({ server }) => Effect.callback<void>((resume) => server.close(() => resume(Effect.void)))
  )

export class Mailbox extends Context.Service<Mailbox, {
  readonly port: number
  readonly mails: Array<Parsed>
}>()("test/Mailbox") {
  static readonly layer = Layer.effect(Mailbox, Effect.map(startMailbox(), ({ mails, port }) => ({ port, mails })))
}

/** Mails to `address`, once there are `count`. */
export const mailsTo = (address: string, count = 1) =>
  Effect.flatMap(Mailbox, (box) => eventually(Effect.sync(() => box.mails.filter((m) => m.to.includes(address))), (m) => m.length >= count))

/** The answer links of a mail's text, by the label line before each. */
export const linksOf = (text: string): Record<string, string> => {
  const lines = text.split("\n")
  const out: Record<string, string> = {}
  lines.forEach((line, i) => {
    const m = /^http:\/\/localhost:8080(\/answer\/[^\s]+)$/.exec(line.trim())
    if (m !== null) out[(lines[i - 1] ?? "").replace(/:$/, "").trim()] = m[1]!
  })
  return out
}

/** Opens a path of the test server as a browser would, without following redirects. */
export const open = (path: string, init: { readonly method?: string; readonly form?: Record<string, string> } = {}) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.promise(async () => {
      const response = await fetch(`${baseUrl}${path}`, {
        method: init.method ?? "GET",
        redirect: "manual",
        ...(init.form === undefined ? {} : {
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(init.form).toString()
        })
      })
      return { status: response.status, headers: response.headers, text: await response.text() }
    }))
