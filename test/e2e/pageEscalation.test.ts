/**
 * A page's escalation survives a crash of a real `herald serve`: the server
 * is killed (SIGKILL) in the middle of an escalation and started again on the
 * same database; the next step still arrives, and arrives once.
 *
 * A family of three (Ann pages; Bob is on call; Cid is next in the rotation),
 * each with a sandbox phone; the group escalates to the `next` person after
 * one minute and to the whole `group` after two. The servers run with
 * `HERALD_ONCALL_TIME_SCALE=0.1`, so a minute of escalation is 6 s.
 *
 * 1. Killed after step 0 reached Bob's phone and before step 1 was due.
 * 2. Killed the moment step 1 has fired (it is in `notified`) but before its
 *    push left: the first process runs with `HERALD_PUSH_PAUSED=true`, which
 *    pins the kill there without racing the sender.
 * 3. Killed the moment the sandbox recorded step 1's push to Cid's phone.
 *
 * Step 2 (the whole group, 6 s after step 1) is the barrier: once it is
 * in, a step 1 the restarted server would repeat would have come already.
 * Then `notified` holds each (person, step) once, no step ran before its
 * time, and every phone holds exactly one time-sensitive alert of the page
 * per step that paged its person (the alert names its step).
 */
import { assert, describe, it } from "@effect/vitest"
import type { OncallPage as Page } from "@herald/api"
import { Effect } from "effect"
import { childDatabase } from "../support/database.ts"
import { startServer } from "../support/process.ts"
import type { ServerProcess } from "../support/process.ts"
import { dbPerson, familyOnCall, withPhone } from "../support/familyOncall.ts"
import { agentClient, personClient, pushesQueued, within } from "../support/serverClients.ts"

const SCALE = 0.1
const MINUTE = 60_000 * SCALE

/** An iOS alert as the sandbox recorded it. */
interface Alert {
  readonly aps: { readonly "interruption-level"?: string }
  readonly herald: { readonly pageId?: string; readonly step?: string }
}



const steps = (page: Page, userId: string) => page.notified.filter((n) => n.userId === userId).map((n) => n.step).sort((a, b) => a - b)
const has = (page: Page, userId: string, step: number) => page.notified.some((n) => n.userId === userId && n.step === step)

/** A family of three with phones, an on-call group over them, and a page Ann sends to it; on `first`. */
const pagedFamily = (first: ServerProcess, env: Record<string, string>) =>
  Effect.gen(function*() {
    const [ann, bob, cid] = [
      yield* withPhone(first.baseUrl, yield* dbPerson(env, "Ann")),
      yield* withPhone(first.baseUrl, yield* dbPerson(env, "Bob")),
      yield* withPhone(first.baseUrl, yield* dbPerson(env, "Cid"))
    ]
    const { agent, groupId, secret } = yield* familyOnCall(first.baseUrl, [ann, bob, cid], [
      { afterMinutes: 1, target: "next" },
      { afterMinutes: 2, target: "group" }
    ])
    const created = yield* agent.pages.create({
      params: { groupId },
      payload: { title: "Basement flooding", body: "The sump pump alarm went off." }
    })
    assert.isFalse(created.deduplicated)
    return { ann, bob, cid, secret, page: created.page }
  })

/** After a restart on `server`: waits for step 2 (the barrier), then checks every step came once. */
const checkAfterRestart = (
  server: ServerProcess,
  env: Record<string, string>,
  family: Effect.Success<ReturnType<typeof pagedFamily>>
) =>
  Effect.gen(function*() {
    const { ann, bob, cid, page, secret } = family
    const agent = yield* agentClient(server.baseUrl, secret)
    const getPage = agent.pages.get({ params: { id: page.id } })
    const done = yield* within(60, getPage, (p) => has(p, cid.id, 2), "step 2 after the restart")
    assert.strictEqual(done.status, "triggered")
    assert.deepStrictEqual(steps(done, bob.id), [0, 2], "Bob: paged first, then with the group")
    assert.deepStrictEqual(steps(done, cid.id), [1, 2], "Cid: step 1 (next) once, then with the group")
    assert.deepStrictEqual(steps(done, ann.id), [2], "Ann: with the group only")

    // Each step waited for its time: `afterMinutes` after the page was created.
    const createdAt = Date.parse(page.createdAt)
    for (const n of done.notified) {
      assert.isAtLeast(Date.parse(n.at), createdAt + [0, 1, 2][n.step]! * MINUTE, `step ${n.step} not before its time`)
    }

    // One alert per notified entry on each phone: nothing lost, nothing repeated. The pushes of step 2
    // may still be on their way when the page shows it; once they are in and none is queued, a repeated
    // push of an earlier step (queued before them) would be in too: then each phone is read again.
    const phones = yield* Effect.forEach([ann, bob, cid], (person) =>
      Effect.gen(function*() {
        const app = yield* personClient(server.baseUrl, person.session)
        const read = Effect.map(app.devices.deliveries({ params: { id: person.deviceId } }), (r) => r.items.map((d) => d.payload as unknown as Alert))
        const expected = steps(done, person.id)
        yield* within(10, read, (alerts) => alerts.length >= expected.length, `${person.name}'s alerts`)
        return { person, read, expected }
      }))
    yield* within(10, pushesQueued(env, phones.map(({ person }) => person.deviceId)), (n) => n === 0, "no push still queued")
    for (const { expected, person, read } of phones) {
      const alerts = yield* read
      // Each alert is this page's, time-sensitive, and names its step: one per step that paged the person.
      assert.deepStrictEqual(alerts.map((a) => Number(a.herald.step)).sort((a, b) => a - b), expected, `${person.name}'s phone`)
      for (const alert of alerts) {
        assert.strictEqual(alert.herald.pageId, page.id)
        assert.strictEqual(alert.aps["interruption-level"], "time-sensitive")
      }
    }
  })

// Concurrent: each case has its own database and servers, and spends most of its time waiting for
// scaled minutes, so the three share one worker's wall time instead of queueing one after another.
describe.concurrent("page escalation across a crash", () => {
  it.live("killed between step 0 and step 1: step 1 arrives once after the restart", () =>
    Effect.scoped(Effect.gen(function*() {
      const env = { ...(yield* childDatabase).env, HERALD_ONCALL_TIME_SCALE: String(SCALE) }
      const first = yield* startServer(env)
      const family = yield* pagedFamily(first, env)
      const { bob, cid, page, secret } = family
      const bobApp = yield* personClient(first.baseUrl, bob.session)
      yield* within(10, Effect.map(bobApp.devices.deliveries({ params: { id: bob.deviceId } }), (r) => r.items.length), (n) => n >= 1, "step 0 at Bob's phone")
      const before = yield* (yield* agentClient(first.baseUrl, secret)).pages.get({ params: { id: page.id } })
      assert.isFalse(has(before, cid.id, 1), "step 1 not yet run when the server dies")
      yield* first.kill

      const second = yield* startServer(env)
      yield* checkAfterRestart(second, env, family)
    })), { timeout: 180_000 })

  it.live("killed the moment step 1 fired, before its push left: its push arrives once, the step is not run again", () =>
    Effect.scoped(Effect.gen(function*() {
      const env = { ...(yield* childDatabase).env, HERALD_ONCALL_TIME_SCALE: String(SCALE) }
      const first = yield* startServer({ ...env, HERALD_PUSH_PAUSED: "true" })
      const family = yield* pagedFamily(first, env)
      const { cid, page, secret } = family
      const getPage = (yield* agentClient(first.baseUrl, secret)).pages.get({ params: { id: page.id } })
      const fired = yield* within(30, getPage, (p) => has(p, cid.id, 1), "step 1 recorded")
      yield* first.kill
      assert.isFalse(has(fired, cid.id, 2))

      const second = yield* startServer(env)
      yield* checkAfterRestart(second, env, family)
    })), { timeout: 180_000 })

  it.live("killed the moment step 1's push reached the sandbox: no second push after the restart", () =>
    Effect.scoped(Effect.gen(function*() {
      const env = { ...(yield* childDatabase).env, HERALD_ONCALL_TIME_SCALE: String(SCALE) }
      const first = yield* startServer(env)
      const family = yield* pagedFamily(first, env)
      const { cid } = family
      const cidApp = yield* personClient(first.baseUrl, cid.session)
      yield* within(30, Effect.map(cidApp.devices.deliveries({ params: { id: cid.deviceId } }), (r) => r.items.length), (n) => n >= 1, "step 1 at Cid's phone")
      yield* first.kill

      const second = yield* startServer(env)
      yield* checkAfterRestart(second, env, family)
    })), { timeout: 180_000 })
})
