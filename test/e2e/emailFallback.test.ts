/**
 * A prompt's e-mail fallback survives crashes of a real `herald serve`, its
 * mail going to a real SMTP server run here (each mail parsed by mailparser):
 *
 * 1. The person verifies their address and an agent asks with
 *    `fallback.email.afterSeconds: 60`; the server dies (SIGKILL) with the
 *    `EmailFallback` timer stored and not yet due: no prompt mail yet.
 * 2. While no server runs, the timer is made due (time passing, without
 *    waiting a minute). The next server mails the prompt: exactly one mail.
 *    Once the person's settings count it sent (`mailsSent`), it is killed too.
 * 3. A third server is the barrier: its outbox worker's first pass has run
 *    once another person's verification mail (queued after its start) has
 *    arrived; the prompt was not mailed again. Its answer link still answers.
 *    Stopped, the database holds one prompt mail, sent, and the timer done.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { linksOf, startMailbox } from "../../packages/server/test/email/mailbox.ts"
import { childDatabase } from "../support/database.ts"
import { startServer, stopServer } from "../support/process.ts"
import type { ServerProcess } from "../support/process.ts"
import { agentClient, onDatabaseOf, personClient, personOn, within } from "../support/serverClients.ts"



const post = (server: ServerProcess, path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${server.baseUrl}${path}`, { method: "POST", redirect: "manual" })
    return { status: response.status, text: await response.text() }
  })

it.live("the e-mail fallback across kill -9: mailed once after the restart, not again after a second crash", () =>
  Effect.scoped(Effect.gen(function*() {
    const box = yield* startMailbox()
    const env = {
      ...(yield* childDatabase).env,
      HERALD_SMTP_URL: `smtp://127.0.0.1:${box.port}`,
      HERALD_PUBLIC_URL: "http://localhost:8080"
    }
    const onDatabase = onDatabaseOf(env)
    const mailsTo = (address: string, subject: string) => box.mails.filter((m) => m.to.includes(address) && m.subject.startsWith(subject))

    // 1. Verified, asked, killed while the fallback is pending.
    const first = yield* startServer(env)
    const { session } = yield* personOn(env, { email: "ada@example.test", name: "Ada" })
    const app = (server: ServerProcess) => personClient(server.baseUrl, session)
    yield* (yield* app(first)).emailChannel.put({ payload: { enabled: true } })
    const verification = yield* within(30, Effect.sync(() => mailsTo("ada@example.test", "Confirm")), (m) => m.length === 1, "verification mail")
    const confirmed = yield* post(first, Object.values(linksOf(verification[0]!.text))[0]!)
    assert.strictEqual(confirmed.status, 200)
    const { secret } = yield* (yield* app(first)).tokens.create({ payload: { name: "asker", scopes: ["interactions:create", "interactions:read"] } })
    const created = yield* (yield* agentClient(first.baseUrl, secret)).interactions.create({
      payload: { kind: "approval", title: "Rotate keys?", prompt: "Tonight.", expiresInSeconds: 3600, fallback: { email: { afterSeconds: 60 } } }
    })
    const id = created.interaction.id
    yield* first.kill
    assert.lengthOf(mailsTo("ada@example.test", "Waiting"), 0, "nothing mailed before the fallback is due")

    // 2. Time passes while down: the stored timer is due. The next server mails once; killed once it counts it sent.
    const timers = yield* onDatabase(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE cluster_messages SET deliver_at = ${Date.now()} WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'EmailFallback'`
      return yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM cluster_messages WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'EmailFallback' AND NOT processed`
    }))
    assert.strictEqual(timers[0]!.n, 1, "the fallback timer survived the crash, pending")
    const second = yield* startServer(env)
    const mailed = yield* within(60, Effect.sync(() => mailsTo("ada@example.test", "Waiting")), (m) => m.length >= 1, "the prompt's mail")
    yield* within(30, Effect.flatMap(app(second), (a) => a.emailChannel.get()), (c) => c.mailsSent === 2, "the mail counted sent")
    yield* second.kill

    // 3. A barrier on a third server: another person's verification mail, queued after it started.
    const third = yield* startServer(env)
    const { session: otherSession } = yield* personOn(env, { email: "bea@example.test", name: "Bea" })
    yield* (yield* personClient(third.baseUrl, otherSession)).emailChannel.put({ payload: { enabled: true } })
    yield* within(30, Effect.sync(() => mailsTo("bea@example.test", "Confirm")), (m) => m.length === 1, "the barrier mail")
    assert.lengthOf(mailsTo("ada@example.test", "Waiting"), 1, "the prompt was mailed exactly once")
    assert.strictEqual(mailed[0]!.subject, "Waiting for your answer: Rotate keys?")

    // The mailed link still answers, on the third server.
    const answered = yield* post(third, linksOf(mailed[0]!.text)["Approve"]!)
    assert.strictEqual(answered.status, 200)
    const read = yield* (yield* agentClient(third.baseUrl, secret)).interactions.get({ params: { id } })
    assert.deepStrictEqual([read.status, read.respondingDeviceId], ["approved", null])
    yield* stopServer(third)

    const rows = yield* onDatabase(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ status: string }>`SELECT status FROM mail_outbox WHERE ref_id = ${id}`
    }))
    assert.deepStrictEqual(rows.map((r) => r.status), ["sent"])
    assert.lengthOf(mailsTo("ada@example.test", "Waiting"), 1)
  })), { timeout: 240_000 })
