/**
 * Reply webhooks over HTTP: CRUD with redacted reads, signed sample events
 * checked by an independent Standard Webhooks verifier, outcome events and the
 * endpoint dedup rule, the retry schedule and its attempt log, rotation,
 * cancellation on delete and disable, 410 Gone, and the SSRF refusals.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, timingSafeEqual } from "node:crypto"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveDeadline, receiver } from "../../../../test/support/prompts.ts"
import type { Received } from "../../../../test/support/prompts.ts"
import { makeAgent, testServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>

const scopes = ["services:read", "services:write", "interactions:create", "interactions:read"] as const

/** The Standard Webhooks check, written from the specification (not Herald's code). */
const verify = (secret: string, r: Received): boolean => {
  const id = String(r.headers["webhook-id"])
  const timestamp = String(r.headers["webhook-timestamp"])
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  const expected = Buffer.from(createHmac("sha256", key).update(`${id}.${timestamp}.${r.body}`).digest("base64"))
  return String(r.headers["webhook-signature"]).split(" ").some((candidate) => {
    const [version, signature] = candidate.split(",")
    const given = Buffer.from(signature ?? "")
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected)
  })
}

const save = (agent: Agent, url: string, payload: Partial<Parameters<Agent["client"]["webhooks"]["create"]>[0]["payload"]> = {}) =>
  agent.client.webhooks.create({ payload: { name: "deploy bot", url, ...payload } })

const ask = (agent: Agent, webhookId?: string) =>
  agent.client.interactions.create({
    payload: { kind: "approval", title: "Deploy?", prompt: "v2 to production", ...(webhookId !== undefined ? { webhookId } : {}) }
  })

const deliveryRows = (interactionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ webhookId: string | null; status: string; attempts: number }>`
      SELECT webhook_id, status, attempts FROM reply_webhook_deliveries WHERE interaction_id = ${interactionId} ORDER BY webhook_id`)

const open = { HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1", HERALD_RETRY_TIME_SCALE: "0.001" }

layer(testServerLayer(open), { excludeTestServices: true, timeout: "60 seconds" })("reply webhooks", (it) => {
  it.effect("saves, lists and reads webhooks without secrets or header values; one account default", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const first = yield* save(agent, "http://127.0.0.1:9/a", {
        headers: [{ name: "Authorization", value: "Bearer very-secret" }],
        isDefault: true
      })
      assert.match(first.signingSecret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.deepStrictEqual(first.webhook.headers.map((h) => ({ ...h })), [{ name: "Authorization", value: "[redacted]" }])
      assert.deepStrictEqual(first.webhook.events, ["interaction.answered", "interaction.expired", "interaction.canceled"])
      assert.strictEqual(first.webhook.preset, "generic")
      assert.strictEqual(first.webhook.enabled, true)
      const second = yield* save(agent, "http://127.0.0.1:9/b", { isDefault: true, preset: "chat", events: ["interaction.answered"] })
      const listed = yield* agent.client.webhooks.list()
      assert.deepStrictEqual(listed.items.map((w) => [w.id, w.isDefault]), [[second.webhook.id, true], [first.webhook.id, false]])
      assert.notInclude(JSON.stringify(listed), "very-secret")
      assert.notInclude(JSON.stringify(listed), first.signingSecret)

      const updated = yield* agent.client.webhooks.update({ params: { id: first.webhook.id }, payload: { name: "renamed", isDefault: true } })
      assert.strictEqual(updated.name, "renamed")
      const read = yield* agent.client.webhooks.get({ params: { id: second.webhook.id } })
      assert.strictEqual(read.isDefault, false)
      assert.deepStrictEqual(read.deliveries, [])

      const stranger = yield* makeAgent([...scopes])
      assert.strictEqual((yield* Effect.flip(stranger.client.webhooks.get({ params: { id: first.webhook.id } })))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(stranger.client.webhooks.remove({ params: { id: first.webhook.id } })))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(stranger.client.webhooks.rotateSecret({ params: { id: first.webhook.id } })))._tag, "NotFound")
      yield* agent.client.webhooks.remove({ params: { id: first.webhook.id } })
      assert.deepStrictEqual((yield* agent.client.webhooks.list()).items.map((w) => w.id), [second.webhook.id])
    }))

  it.effect("making a webhook the default changes nothing when the id is not the account's; concurrent defaults leave one", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const stranger = yield* makeAgent([...scopes])
      const current = yield* save(agent, "http://127.0.0.1:9/current", { isDefault: true })
      const foreign = yield* save(stranger, "http://127.0.0.1:9/foreign")
      for (const id of [foreign.webhook.id, "whk_00000000000000000000000000"]) {
        const refused = yield* Effect.flip(agent.client.webhooks.update({ params: { id }, payload: { isDefault: true } }))
        assert.strictEqual(refused._tag, "NotFound")
      }
      assert.strictEqual((yield* agent.client.webhooks.get({ params: { id: current.webhook.id } })).isDefault, true)

      const others = yield* Effect.forEach([1, 2, 3, 4], (n) => save(agent, `http://127.0.0.1:9/other-${n}`))
      yield* Effect.forEach(others, (w) => agent.client.webhooks.update({ params: { id: w.webhook.id }, payload: { isDefault: true } }), {
        concurrency: "unbounded"
      })
      const defaults = (yield* agent.client.webhooks.list()).items.filter((w) => w.isDefault)
      assert.strictEqual(defaults.length, 1)
    }))

  it.effect("an account keeps at most 50 reply webhooks, also when creates arrive together", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* Effect.forEach(Array.from({ length: 45 }, (_, n) => n), (n) => save(agent, `http://127.0.0.1:9/${n}`), { concurrency: 5 })
      const together = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, n) => n),
        (n) => Effect.result(save(agent, `http://127.0.0.1:9/together-${n}`)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(together.filter((r) => r._tag === "Success").length, 5)
      assert.strictEqual((yield* agent.client.webhooks.list()).items.length, 50)
      const refused = yield* Effect.flip(save(agent, "http://127.0.0.1:9/one-too-many"))
      assert.strictEqual(refused._tag === "LimitReached" ? refused.limit : refused._tag, 50)
    }))

  it.effect("a repeated event in a subscription is kept once", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { webhook } = yield* save(agent, "http://127.0.0.1:9/dup", { events: ["interaction.answered", "interaction.answered"] })
      assert.deepStrictEqual(webhook.events, ["interaction.answered"])
      const updated = yield* agent.client.webhooks.update({
        params: { id: webhook.id },
        payload: { events: ["interaction.expired", "interaction.expired", "interaction.canceled"] }
      })
      assert.deepStrictEqual(updated.events, ["interaction.expired", "interaction.canceled"])
    }))

  it.effect("the chat preset's text stays one line when the title or the reply has line breaks", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const target = yield* receiver()
      const chat = yield* save(agent, `${target.url}/chat`, { preset: "chat" })
      const device = yield* agent.app.devices.register({ payload: { platform: "android", pushToken: `chat-${Date.now()}` } })
      const asked = yield* agent.client.interactions.create({
        payload: { kind: "reply", title: "Release\nnotes?", prompt: "Write them", webhookId: chat.webhook.id }
      })
      yield* agent.app.interactions.answer({
        params: { id: asked.interaction.id },
        payload: { status: "replied", response: "first\r\n\nsecond\u2028third", deviceId: device.id }
      })
      yield* eventually(Effect.sync(() => target.received.length), (n) => n >= 1)
      const body = JSON.parse(target.received[0]!.body) as { text: string; data: { interaction: { response: string } } }
      assert.strictEqual(body.text, "“Release notes?” was answered: first second third")
      assert.strictEqual(body.data.interaction.response, "first\r\n\nsecond\u2028third")
    }))

  it.effect("a service's default reply webhook must be the account's, and falls back to none when deleted", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const stranger = yield* makeAgent([...scopes])
      const { webhook } = yield* save(agent, "http://127.0.0.1:9/svc")
      const theirs = yield* save(stranger, "http://127.0.0.1:9/theirs")
      const created = yield* agent.client.services.create({ payload: { title: "CI", defaultReplyWebhookId: webhook.id } })
      assert.strictEqual(created.service.defaultReplyWebhookId, webhook.id)
      const refused = yield* Effect.flip(agent.client.services.update({
        params: { id: created.service.id },
        payload: { defaultReplyWebhookId: theirs.webhook.id }
      }))
      assert.strictEqual(refused._tag, "NotFound")
      yield* agent.client.webhooks.remove({ params: { id: webhook.id } })
      const after = yield* agent.client.services.get({ params: { id: created.service.id } })
      assert.isNull(after.defaultReplyWebhookId)
    }))

  it.effect("the sample event is signed (verified independently), carries the saved headers and is returned with its attempt", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const target = yield* receiver()
      const { signingSecret, webhook } = yield* save(agent, `${target.url}/hook`, { headers: [{ name: "X-Team", value: "infra" }] })
      const delivery = yield* agent.client.webhooks.test({ params: { id: webhook.id } })
      assert.strictEqual(delivery.status, "delivered")
      assert.strictEqual(delivery.attempts, 1)
      assert.strictEqual(delivery.responseCode, 200)
      assert.strictEqual(delivery.attemptLog.length, 1)
      assert.strictEqual(delivery.attemptLog[0]?.status, "delivered")
      const [got] = target.received
      assert.strictEqual(got?.path, "/hook")
      assert.strictEqual(got?.headers["x-team"], "infra")
      assert.strictEqual(got?.headers["webhook-id"], delivery.id)
      assert.isTrue(verify(signingSecret, got!))
      assert.isFalse(verify(signingSecret, { ...got!, body: got!.body.replace("approved", "denied") }))
      const body = JSON.parse(got!.body) as { type: string; data: { interaction: { status: string } } }
      assert.strictEqual(body.type, "interaction.answered")
      assert.strictEqual(body.data.interaction.status, "approved")
      const read = yield* agent.client.webhooks.get({ params: { id: webhook.id } })
      assert.deepStrictEqual(read.deliveries.map((d) => d.id), [delivery.id])
    }))

  it.effect("an ended prompt sends one event per endpoint: its webhook and the account default, deduplicated", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const target = yield* receiver()
      const own = yield* save(agent, `${target.url}/own`, { preset: "assistant" })
      const fallback = yield* save(agent, `${target.url}/default`, { isDefault: true, preset: "chat" })
      yield* save(agent, `${target.url}/disabled`, { enabled: false, isDefault: false })
      yield* save(agent, `${target.url}/answers-only`, { events: ["interaction.answered"] }).pipe(
        Effect.flatMap((w) => agent.client.webhooks.update({ params: { id: w.webhook.id }, payload: { isDefault: false } }))
      )

      const both = yield* ask(agent, own.webhook.id)
      yield* agent.client.interactions.cancel({ params: { id: both.interaction.id } })
      yield* eventually(Effect.sync(() => target.received.length), (n) => n >= 2)
      const paths = target.received.map((r) => r.path).sort()
      assert.deepStrictEqual(paths, ["/default", "/own"])
      const assistant = JSON.parse(target.received.find((r) => r.path === "/own")!.body) as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(assistant).sort(), ["interactionId", "message", "response", "status", "timedOut", "type"])
      assert.strictEqual(assistant.type, "interaction.canceled")
      assert.strictEqual(assistant.status, "canceled")
      assert.isTrue(verify(own.signingSecret, target.received.find((r) => r.path === "/own")!))
      const chat = JSON.parse(target.received.find((r) => r.path === "/default")!.body) as { text: string }
      assert.match(chat.text, /was canceled/)
      assert.isTrue(verify(fallback.signingSecret, target.received.find((r) => r.path === "/default")!))

      // The default selected explicitly too: still one event.
      const once = yield* ask(agent, fallback.webhook.id)
      yield* agent.client.interactions.cancel({ params: { id: once.interaction.id } })
      const rows = yield* eventually(deliveryRows(once.interaction.id), (r) => r.every((d) => d.status === "delivered"))
      assert.deepStrictEqual(rows.map((r) => r.webhookId), [fallback.webhook.id])
    }))

  it.effect("an expired prompt sends interaction.expired to webhooks subscribed to it", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const target = yield* receiver()
      const { webhook } = yield* save(agent, `${target.url}/expired`, { events: ["interaction.expired"] })
      const answersOnly = yield* save(agent, `${target.url}/answers`, { events: ["interaction.answered"] })
      const { interaction } = yield* agent.client.interactions.create({
        payload: { kind: "yes_no", title: "Still there?", prompt: "p", webhookId: webhook.id }
      })
      yield* moveDeadline(interaction.id, Date.now())
      yield* eventually(Effect.sync(() => target.received.length), (n) => n === 1)
      const body = JSON.parse(target.received[0]!.body) as { type: string; data: { interaction: { status: string } } }
      assert.strictEqual(target.received[0]!.path, "/expired")
      assert.strictEqual(body.type, "interaction.expired")
      assert.strictEqual(body.data.interaction.status, "expired")
      assert.lengthOf((yield* agent.client.webhooks.get({ params: { id: answersOnly.webhook.id } })).deliveries, 0)
    }))

  it.effect("retries on the schedule until the receiver succeeds; the attempt log holds every attempt", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const target = yield* receiver((n) => ({ status: n < 2 ? 503 : 204 }))
      const { signingSecret, webhook } = yield* save(agent, `${target.url}/flaky`)
      const { interaction } = yield* ask(agent, webhook.id)
      yield* agent.app.interactions.answer({ params: { id: interaction.id }, payload: { status: "approved" } })
      const read = yield* eventually(
        agent.client.webhooks.get({ params: { id: webhook.id } }),
        (w) => w.deliveries[0]?.status === "delivered"
      )
      const delivery = read.deliveries[0]!
      assert.strictEqual(delivery.attempts, 3)
      assert.deepStrictEqual(delivery.attemptLog.map((a) => [a.attempt, a.status, a.responseCode]), [
        [1, "retrying", 503],
        [2, "retrying", 503],
        [3, "delivered", 204]
      ])
      assert.strictEqual(delivery.attemptLog[0]?.error, "HTTP 503")
      assert.isNull(delivery.nextAttemptAt)
      assert.isNotNull(delivery.deliveredAt)
      // The same webhook-id on every attempt, so the receiver can deduplicate.
      assert.deepStrictEqual(new Set(target.received.map((r) => r.headers["webhook-id"])), new Set([delivery.id]))
      assert.isTrue(target.received.every((r) => verify(signingSecret, r)))
      assert.strictEqual(JSON.parse(target.received[2]!.body).data.interaction.status, "approved")
    }))

  it.effect("after rotate-secret, retries not yet sent sign with the new secret", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      let rotated: string | undefined
      // Succeeds only once an attempt is signed with the rotated secret.
      const target = yield* receiver((_, r) => ({ status: rotated !== undefined && verify(rotated, r) ? 200 : 500 }))
      const { signingSecret, webhook } = yield* save(agent, `${target.url}/rotating`)
      const { interaction } = yield* ask(agent, webhook.id)
      yield* agent.client.interactions.cancel({ params: { id: interaction.id } })
      yield* eventually(Effect.sync(() => target.received.length), (n) => n >= 1)
      const fresh = yield* agent.client.webhooks.rotateSecret({ params: { id: webhook.id } })
      rotated = fresh.signingSecret
      assert.notStrictEqual(fresh.signingSecret, signingSecret)
      yield* eventually(deliveryRows(interaction.id), (rows) => rows[0]?.status === "delivered")
      assert.isTrue(verify(signingSecret, target.received[0]!))
      const last = target.received.at(-1)!
      assert.isTrue(verify(fresh.signingSecret, last))
      assert.isFalse(verify(signingSecret, last))
    }))

  it.effect("deleting or disabling a webhook cancels its pending deliveries; 410 Gone fails at once and disables", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const failing = yield* receiver(() => ({ status: 500 }))
      for (const end of ["delete", "disable"] as const) {
        const { webhook } = yield* save(agent, `${failing.url}/${end}`)
        const { interaction } = yield* ask(agent, webhook.id)
        yield* agent.client.interactions.cancel({ params: { id: interaction.id } })
        // Three attempts (5 ms and 300 ms apart at this scale); the fourth is seconds away.
        yield* eventually(deliveryRows(interaction.id), (rows) => rows[0]?.attempts === 3)
        if (end === "delete") yield* agent.client.webhooks.remove({ params: { id: webhook.id } })
        else yield* agent.client.webhooks.update({ params: { id: webhook.id }, payload: { enabled: false } })
        const [row] = yield* deliveryRows(interaction.id)
        assert.strictEqual(row?.status, "canceled", end)
      }

      const gone = yield* receiver(() => ({ status: 410 }))
      const { webhook } = yield* save(agent, `${gone.url}/gone`)
      const { interaction } = yield* ask(agent, webhook.id)
      yield* agent.client.interactions.cancel({ params: { id: interaction.id } })
      const [row] = yield* eventually(deliveryRows(interaction.id), (rows) => rows[0]?.status === "failed")
      assert.strictEqual(row?.attempts, 1)
      // Disabled in its own step, just after the attempt is recorded.
      yield* eventually(agent.client.webhooks.get({ params: { id: webhook.id } }), (w) => !w.enabled)
    }))

  it.effect("refuses metadata and non-HTTPS public targets even with private targets allowed, and redirects to them", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      for (const url of ["https://169.254.169.254/latest/meta-data", "http://example.com/hook", "ftp://127.0.0.1/x"]) {
        const refused = yield* Effect.flip(save(agent, url))
        assert.strictEqual(refused._tag, "WebhookTargetRefused", url)
      }
      const redirecting = yield* receiver(() => ({ status: 307, location: "http://169.254.169.254/latest/meta-data" }))
      const { webhook } = yield* save(agent, `${redirecting.url}/hop`)
      const delivery = yield* agent.client.webhooks.test({ params: { id: webhook.id } })
      assert.strictEqual(delivery.status, "failed")
      assert.isNull(delivery.responseCode)
      assert.match(delivery.error ?? "", /refused|not allowed|forbidden/i)
      assert.strictEqual(redirecting.received.length, 1)
    }))
})

layer(testServerLayer(), { excludeTestServices: true, timeout: "60 seconds" })("reply webhooks without private targets", (it) => {
  it.effect("refuses private, loopback and link-local targets, by address or by name", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const target = yield* receiver()
      for (const url of [
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://127.0.0.1/hook",
        `${target.url}/hook`,
        "https://localhost/hook",
        "https://api.localhost/hook",
        "https://[::1]/hook",
        "https://169.254.169.254/latest/meta-data"
      ]) {
        const refused = yield* Effect.flip(save(agent, url))
        assert.strictEqual(refused._tag === "WebhookTargetRefused" ? refused.code : refused._tag, "WEBHOOK_TARGET_REFUSED", url)
      }
      assert.strictEqual(target.received.length, 0)
    }))

  it.effect("saving does not depend on DNS: a name that does not resolve is saved, and each attempt to it fails and is logged", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { webhook } = yield* save(agent, "https://does-not-resolve.invalid/hook")
      assert.strictEqual(webhook.url, "https://does-not-resolve.invalid/hook")
      const sample = yield* agent.client.webhooks.test({ params: { id: webhook.id } })
      assert.strictEqual(sample.status, "failed")
      assert.deepStrictEqual(sample.attemptLog.map((a) => [a.attempt, a.status, a.responseCode]), [[1, "failed", null]])
      assert.match(sample.error ?? "", /does not resolve/)

      // A prompt's event: the failed attempt is logged and the delivery stays queued for its retry.
      const { interaction } = yield* ask(agent, webhook.id)
      yield* agent.client.interactions.cancel({ params: { id: interaction.id } })
      const read = yield* eventually(
        agent.client.webhooks.get({ params: { id: webhook.id } }),
        (w) => w.deliveries.some((d) => d.id !== sample.id && d.attempts === 1)
      )
      const queued = read.deliveries.find((d) => d.id !== sample.id)!
      assert.strictEqual(queued.status, "retrying")
      assert.isNotNull(queued.nextAttemptAt)
      assert.match(queued.attemptLog[0]?.error ?? "", /does not resolve/)
    }))
})
