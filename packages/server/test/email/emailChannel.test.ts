/**
 * The e-mail channel over HTTP with the typed clients, its mail sent to a real
 * SMTP server run here and each mail parsed with mailparser: the address is
 * verified by its own link before anything else is mailed; a prompt still
 * pending when its persisted `EmailFallback` timer comes due is mailed once
 * (not before: the timer is due exactly `afterSeconds` after creation, and
 * nothing is queued until it fires), with a link per answer; a prompt answered
 * first is not mailed; a link's GET shows a confirmation and answers nothing,
 * its POST answers through the prompt's entity (the long-poll and the reply
 * webhook see it, with no responding device); a second use, an ended prompt
 * and a tampered token are refused; a paged person with no device is mailed
 * an acknowledge link that acknowledges the page.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveDeadline, receiver } from "../../../../test/support/prompts.ts"
import { makeAgent, rawFetch, testServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { personClient } from "../../../../test/support/server.ts"
import { PromptMail } from "../../src/email/PromptMail.ts"
import { seedGroup } from "../oncall/pagesSupport.ts"
import { linksOf, Mailbox, mailsTo, open } from "./mailbox.ts"

const WithMail = Layer.unwrap(Effect.map(Mailbox, (box) =>
  testServerLayer({
    HERALD_SMTP_URL: `smtp://127.0.0.1:${box.port}`,
    HERALD_SMTP_FROM: "Herald Test <herald@example.test>",
    HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1",
    HERALD_RETRY_TIME_SCALE: "0.001"
  }))).pipe(Layer.provideMerge(Mailbox.layer))

const scopes = ["interactions:create", "interactions:read", "services:read", "services:write"] as const
type Agent = Effect.Success<ReturnType<typeof makeAgent>>

/** Turns the channel on and confirms the address with the link mailed to it. */
const verify = (app: Agent["app"], email: string) =>
  Effect.gen(function*() {
    const on = yield* app.emailChannel.put({ payload: { enabled: true } })
    assert.deepStrictEqual([on.enabled, on.verified, on.address, on.mailConfigured], [true, false, email, true])
    const [mail] = yield* mailsTo(email)
    assert.strictEqual(mail!.subject, "Confirm your address for Herald's e-mail channel")
    const link = Object.values(linksOf(mail!.text))[0]!
    const shown = yield* open(link)
    assert.strictEqual(shown.status, 200)
    assert.include(shown.text, "Confirm address")
    assert.isFalse((yield* app.emailChannel.get()).verified, "a GET confirms nothing")
    const done = yield* open(link, { method: "POST" })
    assert.deepStrictEqual([done.status, done.text.includes("Address confirmed")], [200, true])
    assert.isTrue((yield* app.emailChannel.get()).verified)
  })

/** Time reaches the prompt's fallback: its stored timer becomes due now. */
const fallbackComesDue = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE cluster_messages SET deliver_at = ${Date.now()}
        WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'EmailFallback'`).pipe(Effect.orDie)

const fallbackTimer = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ deliverAt: string; processed: boolean }>`
      SELECT deliver_at, processed FROM cluster_messages
      WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'EmailFallback'`).pipe(Effect.orDie)

const queuedMails = (refId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ status: string }>`SELECT status FROM mail_outbox WHERE ref_id = ${refId}`).pipe(Effect.orDie)

layer(WithMail, { excludeTestServices: true, timeout: "90 seconds" })("e-mail channel", (it) => {
  it.effect("a pending prompt is mailed when its fallback comes due, once; GET confirms, POST answers; reuse, tamper refused", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* verify(agent.app, agent.person.email)
      const target = yield* receiver()
      yield* agent.client.webhooks.create({ payload: { name: "hook", url: `${target.url}/hook`, isDefault: true } })

      const created = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "Ship v3?", prompt: "Two <migrations> & a flag.", expiresInSeconds: 3600, fallback: { email: { afterSeconds: 120 } } }
      })
      const id = created.interaction.id
      // Not before: the one timer is due exactly afterSeconds after creation, and nothing is queued yet.
      const [timer] = yield* fallbackTimer(id)
      assert.strictEqual(Number(timer!.deliverAt), Date.parse(created.interaction.createdAt) + 120_000)
      assert.isFalse(timer!.processed)
      assert.lengthOf(yield* queuedMails(id), 0)

      yield* fallbackComesDue(id)
      const [mail] = yield* mailsTo(agent.person.email, 2)
        .pipe(Effect.map((mails) => mails.filter((m) => m.subject.includes("Ship v3?"))))
      assert.strictEqual(mail!.subject, "Waiting for your answer: Ship v3?")
      assert.include(mail!.text, "Two <migrations> & a flag.")
      const links = linksOf(mail!.text)
      assert.deepStrictEqual(Object.keys(links), ["Approve", "Deny"])
      yield* eventually(queuedMails(id), (rows) => rows.length === 1 && rows[0]!.status === "sent")
      // The timer's work delivered again, twice at once, while still pending: no second mail is queued.
      const promptMail = yield* PromptMail
      yield* Effect.all([promptMail.due(id), promptMail.due(id)], { concurrency: 2 })
      assert.deepStrictEqual(yield* queuedMails(id), [{ status: "sent" }])

      // The GET shows the question, escaped, and a button; it answers nothing.
      const shown = yield* open(links["Approve"]!)
      assert.strictEqual(shown.status, 200)
      assert.include(shown.text, "Two &lt;migrations&gt; &amp; a flag.")
      assert.include(shown.text, `<form method="post" action="${links["Approve"]}">`)
      assert.strictEqual(shown.headers.get("cache-control"), "no-store")
      assert.include(shown.headers.get("content-security-policy") ?? "", "form-action 'self'")
      assert.strictEqual(shown.headers.get("referrer-policy"), "no-referrer")
      assert.strictEqual((yield* agent.client.interactions.get({ params: { id } })).status, "pending")

      // The POST answers through the entity: the waiter and the webhook see it.
      const waiter = yield* Effect.forkChild(agent.client.interactions.wait({ params: { id }, query: { timeout: 30 } }))
      const answered = yield* open(links["Approve"]!, { method: "POST" })
      assert.deepStrictEqual([answered.status, answered.text.includes("Your answer was sent: Approve.")], [200, true])
      const waited = yield* Fiber.join(waiter)
      assert.deepStrictEqual(
        [waited.status, waited.respondingUserId, waited.respondingDeviceId],
        ["approved", agent.person.id, null]
      )
      const [hook] = yield* eventually(Effect.sync(() => [...target.received]), (r) => r.length === 1)
      const event = JSON.parse(hook!.body)
      assert.deepStrictEqual([event.type, event.data.interaction.status], ["interaction.answered", "approved"])

      // A second use, either link, and a GET after: refused, saying so.
      const again = yield* open(links["Deny"]!, { method: "POST" })
      assert.deepStrictEqual([again.status, again.text.includes("already answered (approved)")], [409, true])
      assert.strictEqual((yield* open(links["Approve"]!)).status, 409)
      assert.strictEqual((yield* agent.client.interactions.get({ params: { id } })).status, "approved")

      // A tampered token (its signature, or the answer it names) is not found.
      const path = links["Deny"]!
      const flipped = path.slice(0, -1) + (path.endsWith("A") ? "B" : "A")
      assert.strictEqual((yield* open(flipped)).status, 404)
      assert.strictEqual((yield* open(path.replace(".denied.", ".approved."), { method: "POST" })).status, 404)
      assert.strictEqual((yield* open("/answer/nonsense")).status, 404)

    }))

  it.effect("a prompt answered before its fallback is not mailed; an expired prompt's link says so", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* verify(agent.app, agent.person.email)
      const first = yield* agent.client.interactions.create({
        payload: { kind: "yes_no", title: "Lunch?", prompt: "Noon.", expiresInSeconds: 600, fallback: { email: { afterSeconds: 60 } } }
      })
      yield* agent.app.interactions.answer({ params: { id: first.interaction.id }, payload: { status: "yes" } })
      yield* fallbackComesDue(first.interaction.id)
      yield* eventually(fallbackTimer(first.interaction.id), (rows) => rows[0]?.processed === true)
      assert.lengthOf(yield* queuedMails(first.interaction.id), 0)

      // The person's default applies to a prompt that names none; this one is mailed, then expires.
      yield* agent.app.emailChannel.put({ payload: { enabled: true, promptAfterSeconds: 60 } })
      const second = yield* agent.client.interactions.create({
        payload: { kind: "reply", title: "Which env?", prompt: "Pick one.", choices: ["staging", "prod"], expiresInSeconds: 600 }
      })
      const id = second.interaction.id
      yield* fallbackComesDue(id)
      const mails = yield* mailsTo(agent.person.email, 2)
      const mail = mails.find((m) => m.subject === "Waiting for your answer: Which env?")!
      const links = linksOf(mail.text)
      assert.deepStrictEqual(Object.keys(links), ["Reply \"staging\"", "Reply \"prod\"", "Write a reply"])
      const page = yield* open(links["Write a reply"]!)
      assert.include(page.text, "<textarea")
      const empty = yield* open(links["Write a reply"]!, { method: "POST", form: { response: "  " } })
      assert.strictEqual(empty.status, 400)

      yield* moveDeadline(id, Date.now())
      yield* eventually(agent.client.interactions.get({ params: { id } }), (i) => i.status === "expired")
      const late = yield* open(links["Reply \"prod\""]!, { method: "POST" })
      assert.deepStrictEqual([late.status, late.text.includes("expired")], [409, true])
    }))

  it.effect("a fallback timer a crash lost is stored again at start, due when it was", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const agent = yield* makeAgent([...scopes])
      yield* verify(agent.app, agent.person.email)
      const created = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "Lost?", prompt: "x", expiresInSeconds: 600, fallback: { email: { afterSeconds: 300 } } }
      })
      const id = created.interaction.id
      const [before] = yield* fallbackTimer(id)
      yield* sql`DELETE FROM cluster_messages WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'EmailFallback'`
      // What the prompt-deadlines worker runs at start (Interactions.rescheduleDeadlines).
      yield* Effect.flatMap(PromptMail, (mail) => mail.rescheduleMissing)
      const after = yield* fallbackTimer(id)
      assert.deepStrictEqual(after.map((t) => Number(t.deliverAt)), [Number(before!.deliverAt)])
      assert.strictEqual(Number(before!.deliverAt), Date.parse(created.interaction.createdAt) + 300_000)
    }))

  it.effect("a free-text reply is answered from the page's form", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* verify(agent.app, agent.person.email)
      const created = yield* agent.client.interactions.create({
        payload: { kind: "reply", title: "Release note?", prompt: "One line.", expiresInSeconds: 600, fallback: { email: { afterSeconds: 60 } } }
      })
      const id = created.interaction.id
      yield* fallbackComesDue(id)
      const mail = (yield* mailsTo(agent.person.email, 2)).find((m) => m.subject.includes("Release note?"))!
      const done = yield* open(linksOf(mail.text)["Write a reply"]!, { method: "POST", form: { response: "Faster <b>sync</b>" } })
      assert.strictEqual(done.status, 200)
      const read = yield* agent.client.interactions.get({ params: { id } })
      assert.deepStrictEqual([read.status, read.response, read.respondingDeviceId], ["replied", "Faster <b>sync</b>", null])
    }))

  it.effect("settings: defaults, validation, no mail to an unverified address, afterSeconds below the expiry", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const fresh = yield* agent.app.emailChannel.get()
      assert.deepStrictEqual(
        [fresh.enabled, fresh.verified, fresh.promptAfterSeconds, fresh.pages, fresh.verificationSentAt],
        [false, false, null, true, null]
      )
      const tooShort = yield* rawFetch("/api/app/me/email-channel", {
        method: "PUT",
        headers: { authorization: `Bearer ${agent.session}`, "content-type": "application/json" },
        body: JSON.stringify({ enabled: true, promptAfterSeconds: 59 })
      })
      assert.strictEqual(tooShort.status, 400)
      assert.strictEqual((tooShort.body as { code: string }).code, "VALIDATION_FAILED")
      const bad = yield* Effect.flip(agent.client.interactions.create({
        payload: { kind: "approval", title: "x", prompt: "y", expiresInSeconds: 120, fallback: { email: { afterSeconds: 120 } } }
      }))
      assert.strictEqual(bad._tag, "ValidationFailed")
      assert.deepStrictEqual("issues" in bad ? bad.issues?.map((i) => i.path) : [], ["fallback.email.afterSeconds"])

      // On but never verified: a prompt asking for a fallback gets no timer and no mail.
      const on = yield* agent.app.emailChannel.put({ payload: { enabled: true, pages: false } })
      assert.deepStrictEqual([on.enabled, on.verified, on.pages], [true, false, false])
      assert.isNotNull(on.verificationSentAt)
      const again = yield* agent.app.emailChannel.put({ payload: { enabled: true } })
      assert.strictEqual(again.verificationSentAt, on.verificationSentAt, "one verification mail per 10 minutes")
      assert.isFalse(again.pages, "absent fields are unchanged")
      const created = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "x", prompt: "y", fallback: { email: { afterSeconds: 60 } } }
      })
      assert.lengthOf(yield* fallbackTimer(created.interaction.id), 0)
      assert.lengthOf(yield* mailsTo(agent.person.email, 1), 1, "the verification mail only")
    }))

  it.effect("a paged person with no active device is mailed an acknowledge link that acknowledges the page", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles()
      const memberApp = yield* personClient(member.session)
      yield* verify(memberApp as unknown as Agent["app"], member.person.email)
      const groupId = yield* seedGroup(teamId, [member as Someone, owner])
      const pager = yield* agentOf(owner, ["oncall:write", "oncall:read"])
      const created = yield* pager.pages.create({ params: { groupId }, payload: { title: "Disk full", body: "db-1 at 99%" } })
      const pageId = created.page.id

      const mail = (yield* mailsTo(member.person.email, 2)).find((m) => m.subject === "Page: Disk full")!
      assert.include(mail.text, "db-1 at 99%")
      const link = linksOf(mail.text)["Acknowledge"]!
      const shown = yield* open(link)
      assert.deepStrictEqual([shown.status, shown.text.includes("Disk full")], [200, true])
      assert.strictEqual((yield* pager.pages.get({ params: { id: pageId } })).status, "triggered")
      const done = yield* open(link, { method: "POST" })
      assert.strictEqual(done.status, 200)
      assert.strictEqual((yield* pager.pages.get({ params: { id: pageId } })).status, "acknowledged")
      assert.strictEqual((yield* open(link, { method: "POST" })).status, 409)
    }))
})

/** An SMTP server that is not there: every send fails at once (connection refused), so mail stays queued. */
const NoSmtpListening = testServerLayer({ HERALD_SMTP_URL: "smtp://127.0.0.1:9" })

layer(NoSmtpListening, { excludeTestServices: true, timeout: "60 seconds" })("e-mail channel, SMTP down", (it) => {
  it.effect("a queued mail whose prompt was answered meanwhile is dropped, not sent later", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const agent = yield* makeAgent([...scopes])
      yield* agent.app.emailChannel.put({ payload: { enabled: true } })
      // The verification link cannot arrive here: the address is marked verified as the link would.
      yield* sql`UPDATE email_channels SET verified_address = lower(${agent.person.email}) WHERE user_id = ${agent.person.id}`
      const created = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "Hold?", prompt: "x", expiresInSeconds: 600, fallback: { email: { afterSeconds: 60 } } }
      })
      const id = created.interaction.id
      yield* fallbackComesDue(id)
      const failed = yield* eventually(
        sql<{ status: string; attempts: number }>`SELECT status, attempts FROM mail_outbox WHERE ref_id = ${id}`,
        (rows) => rows[0] !== undefined && rows[0].attempts >= 1 && rows[0].status === "queued"
      )
      assert.lengthOf(failed, 1)
      yield* agent.app.interactions.answer({ params: { id }, payload: { status: "approved" } })
      yield* sql`UPDATE mail_outbox SET next_attempt_at = now() WHERE ref_id = ${id}`
      const after = yield* eventually(queuedMails(id), (rows) => rows[0]?.status === "dropped")
      assert.deepStrictEqual(after, [{ status: "dropped" }])
    }))
})
