/**
 * Real senders on webhook services (issue 34): each sender's documented
 * payload (test/fixtures/inbound, README there) posted as that sender posts
 * it — its headers, its content type — over HTTP, and what it becomes: the
 * Event (format, priority, alert identity, state, payload kept), the inbox
 * copy and the push on an Android phone (the sandbox records the FCM message,
 * collapse key included). Firing then resolved withdraws the push; a
 * template maps generic JSON; `curl -d` and text work.
 */
import { assert, layer } from "@effect/vitest"
import type { AgentService, Event } from "@herald/api"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>
type Fcm = { readonly notification?: { title: string; body: string }; readonly data?: Record<string, string>; readonly android?: { collapseKey?: string } }

const fixture = (name: string) => readFileSync(new URL(`../fixtures/inbound/${name}`, import.meta.url), "utf8")
const json = { "content-type": "application/json" }

const post = (path: string, body: string, headers: Record<string, string>) => rawFetch(path, { method: "POST", headers, body })

const scopes = ["services:read", "services:write", "events:read", "inbox:read"] as const

const service = (agent: Agent, extra: Partial<Pick<AgentService, "format" | "template">> = {}) =>
  Effect.map(
    agent.client.services.create({ payload: { title: "Monitoring", ...extra } }),
    (c) => ({ service: c.service, path: new URL(c.webhookUrl).pathname })
  )

/** Posts and answers the Event it became. */
const deliver = (agent: Agent, path: string, body: string, headers: Record<string, string>) =>
  Effect.gen(function*() {
    const answer = yield* post(path, body, headers)
    assert.strictEqual(answer.status, 202, JSON.stringify(answer.body))
    const { eventId } = answer.body as { eventId: string }
    const events = yield* agent.client.history.events({ query: { limit: 100 } })
    return events.items.find((e) => e.id === eventId)!
  })

const pushesOf = (agent: Agent, deviceId: string, count: number) =>
  Effect.map(
    eventually(Effect.map(agent.app.devices.deliveries({ params: { id: deviceId } }), (r) => r.items), (items) => items.length >= count),
    (items) => items.map((i) => ({ pushType: i.pushType, fcm: i.payload as Fcm }))
  )

const pick = (e: Event) => ({ format: e.format, title: e.title, priority: e.priority, state: e.state })

layer(TestServerLayer, { excludeTestServices: true, timeout: "90 seconds" })("inbound senders", (it) => {
  it.effect("each sender's payload, detected from its headers and shape, becomes the Event its sender means", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { path } = yield* service(agent)
      const cases: ReadonlyArray<readonly [string, Record<string, string>, ReturnType<typeof pick>]> = [
        ["grafana-firing.json", json, { format: "grafana", title: "[FIRING:2] High memory usage, High CPU usage", priority: "normal", state: "firing" }],
        ["alertmanager-firing.json", { ...json, "user-agent": "Alertmanager/0.27.0" }, { format: "alertmanager", title: "[FIRING:1] ProbeFailure", priority: "critical", state: "firing" }],
        ["github-push.json", { ...json, "x-github-event": "push" }, { format: "github", title: "Codertocat/Hello-World: 1 commit to master", priority: "normal", state: null }],
        ["github-ping.json", { ...json, "x-github-event": "ping" }, { format: "github", title: "Octocoders/Hello-World: webhook added", priority: "low", state: null }],
        ["gitlab-pipeline-failed.json", { ...json, "x-gitlab-event": "Pipeline Hook" }, { format: "gitlab", title: "gitlab-org/gitlab-test: pipeline Pipeline for branch: master failed", priority: "high", state: "firing" }],
        ["uptime-kuma-down.json", json, { format: "uptime-kuma", title: "Test is down", priority: "high", state: "firing" }],
        ["sentry-event-alert.json", { ...json, "sentry-hook-resource": "event_alert" }, { format: "sentry", title: "ReferenceError: heck is not defined", priority: "high", state: "firing" }]
      ]
      for (const [name, headers, expected] of cases) {
        const event = yield* deliver(agent, path, fixture(name), headers)
        assert.deepStrictEqual(pick(event), expected, name)
        // Nothing a sender sends is refused or lost: the payload is kept, unknown fields included.
        assert.deepStrictEqual(event.payload, JSON.parse(fixture(name)), name)
      }
      const events = (yield* agent.client.history.events()).items
      const byFormat = new Map(events.map((e) => [e.format, e]))
      assert.strictEqual(byFormat.get("grafana")?.body, "• This alert was triggered for zone us-1\n• This alert was triggered for zone eu-1")
      assert.strictEqual(byFormat.get("grafana")?.url, "https://play.grafana.org/alerting/1afz29v7z/edit")
      assert.strictEqual(byFormat.get("grafana")?.alertKey, "{}:{}")
      assert.strictEqual(byFormat.get("alertmanager")?.alertKey, "{}/{severity=\"critical\"}:{alertname=\"ProbeFailure\"}")
      assert.strictEqual(byFormat.get("uptime-kuma")?.alertKey, "monitor:29")
      assert.strictEqual(byFormat.get("uptime-kuma")?.body, "[Test] [🔴 Down] getaddrinfo ENOTFOUND test.com")
      assert.strictEqual(byFormat.get("sentry")?.alertKey, "issue:1117540176")
      assert.strictEqual(byFormat.get("sentry")?.url, "https://sentry.io/organizations/test-org/issues/1117540176/events/e4874d664c3540c1a32eab185f12c5ab/")
      assert.strictEqual(byFormat.get("gitlab")?.body, "on master\ntest\nfailed: test-build")
      assert.strictEqual(byFormat.get("gitlab")?.url, "http://example.com/gitlab-org/gitlab-test/-/pipelines/31")
    }))

  it.effect("a real Grafana alert: the Event, the inbox copy and the push on the phone, collapsed by its alert", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const phone = yield* registerDevice(agent, "android-", "android")
      const { path, service: svc } = yield* service(agent)
      const event = yield* deliver(agent, path, fixture("grafana-firing.json"), json)
      assert.strictEqual(event.serviceId, svc.id)
      const inbox = yield* agent.client.inbox.get({ params: { id: `event:${event.id}` } })
      assert.strictEqual(inbox.title, "[FIRING:2] High memory usage, High CPU usage")
      assert.strictEqual(inbox.body, event.body)
      const [push] = yield* pushesOf(agent, phone.id, 1)
      // The tray shows the body's one-line preview.
      assert.deepStrictEqual(push?.fcm.notification, {
        title: "[FIRING:2] High memory usage, High CPU usage",
        body: "• This alert was triggered for zone us-1 • This alert was triggered for zone eu-1"
      })
      assert.strictEqual(push?.fcm.data?.ref, `event:${event.id}`)
      // The collapse key is the alert's (service + group key), not the event's: a repeat replaces it.
      assert.match(push?.fcm.android?.collapseKey ?? "", /^alr_[\w-]{32}$/)
      yield* deliver(agent, path, fixture("grafana-firing.json"), json)
      const both = yield* pushesOf(agent, phone.id, 2)
      assert.strictEqual(both[1]?.fcm.android?.collapseKey, push?.fcm.android?.collapseKey)
    }))

  for (const [firing, resolved, headers, key] of [
    ["alertmanager-firing.json", "alertmanager-resolved.json", json, "{}/{severity=\"critical\"}:{alertname=\"ProbeFailure\"}"],
    ["uptime-kuma-down.json", "uptime-kuma-up.json", json, "monitor:29"],
    ["sentry-issue-created.json", "sentry-issue-resolved.json", { ...json, "sentry-hook-resource": "issue" }, "issue:1170820242"],
    ["gitlab-pipeline-failed.json", "gitlab-pipeline-success.json", { ...json, "x-gitlab-event": "Pipeline Hook" }, "pipeline:gitlab-org/gitlab-test:master"]
  ] as const) {
    it.effect(`firing then resolved (${firing}): the resolved delivery withdraws the firing push from the phone`, () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent([...scopes])
        const phone = yield* registerDevice(agent, "android-", "android")
        // A phone whose provider keeps answering "try later": its firing push is still queued at the resolve.
        const flaky = yield* registerDevice(agent, "unavailable-", "android")
        const { path } = yield* service(agent)
        const fired = yield* deliver(agent, path, fixture(firing), headers)
        assert.deepStrictEqual([fired.state, fired.alertKey], ["firing", key])
        const [alert] = yield* pushesOf(agent, phone.id, 1)
        const collapseKey = alert?.fcm.android?.collapseKey
        assert.match(collapseKey ?? "", /^alr_/)

        const done = yield* deliver(agent, path, fixture(resolved), headers)
        assert.deepStrictEqual([done.state, done.alertKey, done.priority], ["resolved", key, "low"])
        // The phone that showed it gets the removal command naming the alert's collapse key, and the quiet resolved alert.
        const pushes = yield* pushesOf(agent, phone.id, 3)
        const withdraw = pushes.find((p) => p.pushType === "background")
        assert.deepStrictEqual(withdraw?.fcm.data, { withdraw: collapseKey! })
        const resolvedAlert = pushes.find((p) => p.fcm.data?.ref === `event:${done.id}`)
        assert.notStrictEqual(resolvedAlert?.fcm.android?.collapseKey, collapseKey)
        // The flaky phone never showed it: its queued firing push is dropped, and no removal command goes there.
        const firingCopy = yield* agent.client.inbox.get({ params: { id: `event:${fired.id}` } })
        const receipts = new Map((firingCopy.pushReceipts ?? []).map((r) => [r.deviceId, [r.status, r.errorCode]]))
        assert.deepStrictEqual(receipts.get(flaky.id), ["error", "Withdrawn"])
        assert.deepStrictEqual(receipts.get(phone.id), ["accepted", null])
        // A second resolve finds nothing open: no second removal command.
        yield* deliver(agent, path, fixture(resolved), headers)
        const after = yield* pushesOf(agent, phone.id, 4)
        assert.strictEqual(after.filter((p) => p.pushType === "background").length, 1)
      }))
  }

  it.effect("a chosen format reads the body that way; the spec's JSON keeps its rules and now keeps unknown fields", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      // No Sentry-Hook-Resource header (a proxy dropped it): the service's format still reads the issue.
      const sentry = yield* service(agent, { format: "sentry" })
      const legacy = yield* deliver(agent, sentry.path, JSON.stringify({
        id: "42", project_name: "front-end", culprit: "app.views.index", message: "TypeError: x is undefined", level: "fatal",
        url: "https://sentry.io/organizations/o/issues/42/"
      }), json)
      assert.deepStrictEqual(pick(legacy), { format: "sentry", title: "TypeError: x is undefined", priority: "critical", state: "firing" })
      // `text` takes any body as it is, JSON included.
      const text = yield* service(agent, { format: "text" })
      const raw = JSON.stringify({ title: "not read" })
      const asText = yield* deliver(agent, text.path, raw, json)
      assert.deepStrictEqual([asText.format, asText.title, asText.body], ["text", null, raw])
      // The spec's JSON: extra fields are kept, not refused; its own rules hold.
      const spec = yield* service(agent, { format: "herald" })
      const kept = yield* deliver(agent, spec.path, JSON.stringify({ body: "x", extra: 1, priority: "urgent" }), json)
      assert.deepStrictEqual([kept.format, kept.body, kept.priority, kept.payload], ["herald", "x", "critical", { body: "x", extra: 1, priority: "urgent" }])
      const bad = yield* post(spec.path, JSON.stringify({ body: "x", title: "t".repeat(201) }), json)
      assert.deepStrictEqual([bad.status, (bad.body as { code: string }).code], [400, "VALIDATION_FAILED"])
      // The sender's own format on a service set to another: the service's choice wins.
      const am = yield* service(agent, { format: "alertmanager" })
      const grafanaAsAm = yield* deliver(agent, am.path, fixture("grafana-firing.json"), json)
      assert.strictEqual(grafanaAsAm.format, "alertmanager")
      const read = yield* agent.client.services.get({ params: { id: am.service.id } })
      assert.deepStrictEqual([read.format, read.template], ["alertmanager", null])
    }))

  it.effect("a template maps generic JSON: title, body, link, priority, alert key and state from dot paths", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const template = {
        title: "{{check.name}} on {{host}}",
        body: "{{check.output}} ({{tags[0]}}, {{[\"odd.key\"]}})",
        url: "{{links.dashboard}}",
        priority: "{{check.level}}",
        alertKey: "{{check.id}}",
        state: "{{check.state}}"
      }
      const { path, service: svc } = yield* service(agent, { format: "json", template })
      assert.deepStrictEqual(svc.template, template)
      const payload = (state: string) => JSON.stringify({
        host: "db-1", tags: ["prod"], "odd.key": "yes", links: { dashboard: "https://dash.example.test/db-1" },
        check: { id: "disk-db-1", name: "Disk", output: "/var at 91%", level: "warning", state }
      })
      const fired = yield* deliver(agent, path, payload("alerting"), json)
      assert.deepStrictEqual(
        [fired.format, fired.title, fired.body, fired.url, fired.priority, fired.alertKey, fired.state],
        ["json", "Disk on db-1", "/var at 91% (prod, yes)", "https://dash.example.test/db-1", "high", "disk-db-1", "firing"]
      )
      const ok = yield* deliver(agent, path, payload("ok"), json)
      assert.deepStrictEqual([ok.state, ok.priority], ["resolved", "low"])
      // A path that finds nothing renders empty; a body that renders to nothing is 400.
      yield* agent.client.services.update({ params: { id: svc.id }, payload: { template: { body: "{{check.output}}" } } })
      const empty = yield* post(path, JSON.stringify({ other: 1 }), json)
      assert.deepStrictEqual([empty.status, (empty.body as { code: string }).code], [400, "VALIDATION_FAILED"])
      // A malformed template is refused when it is set, not when a delivery meets it.
      for (const body of ["{{", "{{ a b }}", "{{a}", "x".repeat(1001), "{{a}}".repeat(21)]) {
        // Raw: the typed client would refuse it before sending.
        const refused = yield* rawFetch(`/api/agent/services/${svc.id}`, {
          method: "PATCH",
          headers: { ...json, authorization: `Bearer ${agent.secret}` },
          body: JSON.stringify({ template: { body } })
        })
        assert.strictEqual(refused.status, 400, body)
        const { code, issues } = refused.body as { code: string; issues: ReadonlyArray<{ path: string }> }
        assert.deepStrictEqual([code, issues[0]?.path], ["VALIDATION_FAILED", "body.template.body"], body)
      }
      // Without a template, generic JSON is read by its common field names.
      const plain = yield* service(agent)
      const generic = yield* deliver(agent, plain.path, JSON.stringify({ subject: "Backup", message: "done in 4m", severity: "info" }), json)
      assert.deepStrictEqual(pick(generic), { format: "json", title: "Backup", priority: "low", state: null })
      assert.strictEqual(generic.body, "done in 4m")
    }))

  it.effect("curl -d and text: a form's fields, a bare form body, any textual type; a binary one is 415", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { path } = yield* service(agent)
      const form = { "content-type": "application/x-www-form-urlencoded" }
      // `curl -d 'disk full'`: no key=value pairs, the text is the message.
      const bare = yield* deliver(agent, path, "disk full on db-1", form)
      assert.deepStrictEqual([bare.format, bare.title, bare.body], ["form", null, "disk full on db-1"])
      const fields = yield* deliver(agent, path, "title=Backup%20failed&message=exit+code+2&priority=urgent&url=https%3A%2F%2Fci.example.test%2F1&host=db-1", form)
      assert.deepStrictEqual(
        [fields.title, fields.body, fields.priority, fields.url, fields.payload],
        ["Backup failed", "exit code 2", "critical", "https://ci.example.test/1", { title: "Backup failed", message: "exit code 2", priority: "urgent", url: "https://ci.example.test/1", host: "db-1" }]
      )
      const onlyOther = yield* deliver(agent, path, "host=db-1&load=9.5", form)
      assert.strictEqual(onlyOther.body, "host: db-1\nload: 9.5")
      const xml = yield* deliver(agent, path, "<alert>disk</alert>", { "content-type": "application/xml" })
      assert.deepStrictEqual([xml.format, xml.body], ["text", "<alert>disk</alert>"])
      // ntfy's headers name the title and the priority of a text body.
      const titled = yield* deliver(agent, path, "rebooted", { "content-type": "text/plain", "x-title": "db-1", "x-priority": "5" })
      assert.deepStrictEqual([titled.title, titled.body, titled.priority], ["db-1", "rebooted", "critical"])
      const binary = yield* post(path, "\u0089PNG", { "content-type": "image/png" })
      assert.deepStrictEqual([binary.status, (binary.body as { code: string }).code], [415, "UNSUPPORTED_MEDIA_TYPE"])
      for (const [body, type] of [["   ", "text/plain"], ["", "application/x-www-form-urlencoded"], ["message=%00", "application/x-www-form-urlencoded"]] as const) {
        const refused = yield* post(path, body, { "content-type": type })
        assert.deepStrictEqual([refused.status, (refused.body as { code: string }).code], [400, "VALIDATION_FAILED"], `${type} ${body}`)
      }
    }))

  it.effect("bodies up to 1 MiB are taken (a large GitHub push); beyond, 413; a sender's long texts are cut, the payload pruned", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { path } = yield* service(agent)
      const push = JSON.parse(fixture("github-push.json")) as { commits: Array<unknown>; head_commit: unknown }
      push.commits = Array.from({ length: 300 }, (_, i) => ({ ...(push.head_commit as object), message: `commit ${i}\n\n${"detail ".repeat(300)}` }))
      const big = JSON.stringify(push)
      assert.isAbove(big.length, 600 * 1024)
      const event = yield* deliver(agent, path, big, { ...json, "x-github-event": "push" })
      assert.strictEqual(event.title, "Codertocat/Hello-World: 300 commits to master")
      assert.isTrue(event.body.endsWith("… and 295 more"), event.body)
      assert.isAtMost(JSON.stringify(event.payload).length, 16 * 1024)
      assert.strictEqual((event.payload as { ref: string }).ref, "refs/heads/master")
      const over = yield* post(path, "x".repeat(1024 * 1024 + 1), { "content-type": "text/plain" })
      assert.deepStrictEqual([over.status, (over.body as { code: string }).code], [413, "PAYLOAD_TOO_LARGE"])
    }))
})
