/**
 * Reply webhooks over HTTP, the refusals of issue 20: targets outside global
 * unicast refused at save and at send, a delivery the URL rules refuse failing
 * at once while DNS and network failures are retried, and custom headers that
 * are hop-by-hop or repeat a name in another case refused with an issue naming
 * the header.
 */
import { assert, layer } from "@effect/vitest"
import { vi } from "vitest"
import * as dns from "node:dns"
import { Effect } from "effect"
import { eventually } from "../../../../test/support/eventually.ts"
import { receiver } from "../../../../test/support/prompts.ts"
import { makeAgent, rawFetch, testServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>
type Payload = Parameters<Agent["client"]["webhooks"]["create"]>[0]["payload"]

const scopes = ["services:read", "services:write", "interactions:create", "interactions:read"] as const

const save = (agent: Agent, url: string, payload: Partial<Payload> = {}) =>
  agent.client.webhooks.create({ payload: { name: "deploy bot", url, ...payload } })

/** The targets an outside probe saved with 201 before the allowlist; each is refused with or without the switch. */
const probed = [
  "https://192.0.2.1/hook",
  "https://198.18.0.1/hook",
  "https://198.19.255.1/hook",
  "https://198.51.100.1/hook",
  "https://203.0.113.1/hook",
  "https://192.88.99.1/hook",
  "https://[::127.0.0.1]/hook",
  "https://[2002:7f00:1::1]/hook",
  "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", // Teredo: the client 127.0.0.1, inverted in the last 32 bits
  "https://[::ffff:0:7f00:1]/hook",
  "https://[100::1]/hook",
  "https://[2001:db8::1]/hook",
  "https://[64:ff9b::192.0.2.2]/hook"
]

const refusesProbedTargets = Effect.gen(function*() {
  const agent = yield* makeAgent([...scopes])
  const { webhook } = yield* save(agent, "https://hooks.example.com/hook")
  for (const url of probed) {
    const created = yield* Effect.flip(save(agent, url))
    assert.strictEqual(created._tag === "WebhookTargetRefused" ? created.code : created._tag, "WEBHOOK_TARGET_REFUSED", url)
    const updated = yield* Effect.flip(agent.client.webhooks.update({ params: { id: webhook.id }, payload: { url } }))
    assert.strictEqual(updated._tag === "WebhookTargetRefused" ? updated.code : updated._tag, "WEBHOOK_TARGET_REFUSED", url)
  }
})

/** A prompt ended at once, so its outcome event is queued for `webhookId`; answers the queued delivery once `check` holds. */
const queuedDelivery = (agent: Agent, webhookId: string, check: (d: { readonly id: string; readonly attempts: number }) => boolean) =>
  Effect.gen(function*() {
    const { interaction } = yield* agent.client.interactions.create({
      payload: { kind: "approval", title: "Deploy?", prompt: "v2 to production", webhookId }
    })
    yield* agent.client.interactions.cancel({ params: { id: interaction.id } })
    const read = yield* eventually(agent.client.webhooks.get({ params: { id: webhookId } }), (w) => w.deliveries.some(check))
    return read.deliveries.find(check)!
  })

/** Answers the names given with the addresses given, and asks the real resolver for any other. */
const resolving = (answers: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const real = dns.promises.lookup.bind(dns.promises)
      return vi.spyOn(dns.promises, "lookup").mockImplementation(((host: string, options: dns.LookupAllOptions) => {
        const address = answers[host]
        return address === undefined ? real(host, options) : Promise.resolve([{ address, family: address.includes(":") ? 6 : 4 }])
      }) as never)
    }),
    (spy) => Effect.sync(() => spy.mockRestore())
  )

const open = { HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1", HERALD_RETRY_TIME_SCALE: "0.001" }

layer(testServerLayer(open), { excludeTestServices: true, timeout: "60 seconds" })("reply webhook refusals, private targets allowed", (it) => {
  it.effect("targets outside global unicast are refused at save even with private targets allowed", () => refusesProbedTargets)

  it.effect("a queued delivery the URL rules refuse fails at once, its refusal logged; a network error is retried", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const redirecting = yield* receiver(() => ({ status: 307, location: "https://192.0.2.1/elsewhere" }))
      const refused = yield* save(agent, `${redirecting.url}/hop`)
      const failed = yield* queuedDelivery(agent, refused.webhook.id, (d) => d.attempts >= 1)
      assert.strictEqual(failed.status, "failed")
      assert.isNull(failed.nextAttemptAt)
      assert.deepStrictEqual(failed.attemptLog.map((a) => [a.attempt, a.status, a.responseCode]), [[1, "failed", null]])
      assert.match(failed.error ?? "", /redirect refused: .*non-global address/)
      assert.strictEqual(redirecting.received.length, 1)

      // Nothing listens on the discard port: the connection fails, and that is retried on the schedule.
      const unreachable = yield* save(agent, "http://127.0.0.1:9/hook")
      const retried = yield* queuedDelivery(agent, unreachable.webhook.id, (d) => d.attempts >= 2)
      assert.deepStrictEqual(retried.attemptLog.slice(0, 2).map((a) => [a.attempt, a.status]), [[1, "retrying"], [2, "retrying"]])
      assert.match(retried.attemptLog[0]?.error ?? "", /connection failed/)
    }))

  it.effect("custom headers refuse hop-by-hop names and names repeated in another case, naming the header", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { webhook } = yield* save(agent, "https://hooks.example.com/hook")
      const refusedNames = [
        "Connection",
        "Keep-Alive",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "Expect",
        "Proxy-Authorization",
        "proxy-connection",
        "Content-Encoding",
        "Host",
        "Content-Length"
      ]
      // Raw requests: the typed client checks the same contract schema and would not send these.
      const send = (method: string, path: string, body: unknown) =>
        rawFetch(`/api/agent/webhooks${path}`, {
          method,
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const issuesOf = (headers: ReadonlyArray<{ readonly name: string; readonly value: string }>) =>
        Effect.gen(function*() {
          const created = yield* send("POST", "", { name: "deploy bot", url: "https://hooks.example.com/hook", headers })
          const updated = yield* send("PATCH", `/${webhook.id}`, { headers })
          const messages = [created, updated].map((res) => {
            assert.strictEqual(res.status, 400)
            const body = res.body as { code: string; issues?: ReadonlyArray<{ path: string; message: string }> }
            assert.strictEqual(body.code, "VALIDATION_FAILED")
            return (body.issues ?? []).map((i) => `${i.path}: ${i.message}`).join("\n")
          })
          assert.strictEqual(messages[0], messages[1])
          return messages[0]!
        })
      for (const name of refusedNames) {
        const issues = yield* issuesOf([{ name: "Authorization", value: "Bearer x" }, { name, value: "1" }])
        assert.match(issues, new RegExp(`body\\.headers\\[1\\]\\.name: the header ${name} is `), name)
      }
      const repeated = yield* issuesOf([{ name: "X-Token", value: "a" }, { name: "x-token", value: "b" }])
      assert.match(repeated, /body\.headers\[1\]\.name: the header x-token repeats X-Token/)

      // Names that only look alike are kept.
      const kept = yield* agent.client.webhooks.update({
        params: { id: webhook.id },
        payload: { headers: [{ name: "X-Proxy-Id", value: "a" }, { name: "X-Token", value: "b" }, { name: "Authorization", value: "c" }] }
      })
      assert.deepStrictEqual(kept.headers.map((h) => h.name), ["X-Proxy-Id", "X-Token", "Authorization"])
    }))
})

layer(testServerLayer(), { excludeTestServices: true, timeout: "60 seconds" })("reply webhook refusals", (it) => {
  it.effect("targets outside global unicast are refused at save", () => refusesProbedTargets)

  it.effect("a name that resolves to a refused address fails at once, at send; a name that does not resolve is retried", () =>
    Effect.gen(function*() {
      yield* resolving({ "tunnel.example.test": "2002:7f00:1::1", "docs.example.test": "198.51.100.1" })
      const agent = yield* makeAgent([...scopes])
      for (const host of ["tunnel.example.test", "docs.example.test"]) {
        const { webhook } = yield* save(agent, `https://${host}/hook`)
        const sample = yield* agent.client.webhooks.test({ params: { id: webhook.id } })
        assert.strictEqual(sample.status, "failed", host)
        const failed = yield* queuedDelivery(agent, webhook.id, (d) => d.id !== sample.id && d.attempts >= 1)
        assert.strictEqual(failed.status, "failed", host)
        assert.isNull(failed.nextAttemptAt, host)
        assert.deepStrictEqual(failed.attemptLog.map((a) => [a.attempt, a.status]), [[1, "failed"]], host)
        // The refusal names the host, never what it resolved to.
        assert.strictEqual(failed.error, `${host} is or resolves to a link-local, metadata, reserved or other non-global address`)
      }

      const { webhook } = yield* save(agent, "https://does-not-resolve.invalid/hook")
      const queued = yield* queuedDelivery(agent, webhook.id, (d) => d.attempts >= 1)
      assert.strictEqual(queued.status, "retrying")
      assert.isNotNull(queued.nextAttemptAt)
      assert.match(queued.error ?? "", /does not resolve/)
    }))
})
