/**
 * A family on call for the suite's page tests: Ann pages, Bob is on call, Cid
 * is next in the rotation, each with a sandbox phone. The nodes run with
 * `HERALD_ONCALL_TIME_SCALE=0.1`, so an escalation minute is 6 s.
 *
 * `checkPages` waits for every page's last step, then holds each page to its
 * rules however many nodes ran it: each (person, step) paged once and none
 * before its time (`notified`), one time-sensitive alert per step on each
 * phone that step paged, one `page.escalated` audit entry per step, and one
 * inbox item per page for each person it paged.
 */
import { assert } from "@effect/vitest"
import { AuditLogPage } from "@herald/api"
import type { OncallPage } from "@herald/api"
import { Effect } from "effect"
import { agentClient, makePerson, personClient, within } from "../../support/cluster.ts"
import { familyOnCall, withPhone } from "../../support/familyOncall.ts"
import { pushesQueued } from "../../support/serverClients.ts"
import type { Escalation, Someone } from "../../support/familyOncall.ts"
import type { Cluster, ClusterNode } from "../../support/cluster.ts"

export const SCALE = 0.1
/** An escalation minute, scaled. */
export const MINUTE = 60_000 * SCALE

export type EscalationStep = Escalation

/** An iOS alert as the sandbox recorded it. */
interface Alert {
  readonly aps?: { readonly "interruption-level"?: string }
  readonly herald?: { readonly pageId?: string; readonly step?: string }
}

/** Ann, Bob and Cid with phones; a family Ann owns; an on-call group over them with `escalation`; Ann's token. */
export const onCallFamily = (cluster: Cluster, escalation: ReadonlyArray<EscalationStep>) =>
  Effect.gen(function*() {
    const { baseUrl } = cluster.nodes[0]!
    const people: Array<Effect.Success<ReturnType<typeof withPhone<Someone>>>> = []
    for (const name of ["Ann", "Bob", "Cid"]) people.push(yield* withPhone(baseUrl, yield* makePerson(cluster, name)))
    const [ann, bob, cid] = [people[0]!, people[1]!, people[2]!]
    const { groupId, secret, teamId } = yield* familyOnCall(baseUrl, [ann, bob, cid], escalation)
    return { ann, bob, cid, people, secret, teamId, groupId, escalation, env: cluster.env }
  }).pipe(Effect.orDie)

export type Family = Effect.Success<ReturnType<typeof onCallFamily>>

/** Ann pages the group through `node`. */
export const pageThrough = (family: Family, node: ClusterNode, title: string) =>
  Effect.gen(function*() {
    const agent = yield* agentClient(node, family.secret)
    const created = yield* agent.pages.create({
      params: { groupId: family.groupId },
      payload: { title, body: "The sump pump alarm went off." }
    })
    assert.isFalse(created.deduplicated)
    return created.page
  }).pipe(Effect.orDie)

/** The steps that page each person: step 0 Bob (on call), a `next` step Cid, a `group` step all three. */
const expectedSteps = (family: Family) => {
  const steps = new Map(family.people.map((p) => [p.id, [] as Array<number>]))
  steps.get(family.bob.id)!.push(0)
  family.escalation.forEach((s, i) => {
    for (const p of s.target === "group" ? family.people : [family.cid]) steps.get(p.id)!.push(i + 1)
  })
  return steps
}

/** When step `step` of `page` is due. */
export const dueAt = (family: Family, page: OncallPage, step: number) =>
  Date.parse(page.createdAt) + (step === 0 ? 0 : family.escalation[step - 1]!.afterMinutes * MINUTE)

const stepsOf = (page: OncallPage, userId: string) =>
  page.notified.filter((n) => n.userId === userId).map((n) => n.step).sort((a, b) => a - b)

/** One step as it ran: for whom, when it was due and when it ran (ms since the epoch). */
export interface StepRun {
  readonly title: string
  readonly step: number
  readonly userId: string
  readonly due: number
  readonly at: number
}

/**
 * Waits (through `node`) for every page's last step, then checks each page's rules (see the module's comment);
 * answers every (person, step) as it ran, for the caller's bounds on lateness.
 */
export const checkPages = (node: ClusterNode, family: Family, pages: ReadonlyArray<OncallPage>) =>
  Effect.gen(function*() {
    const agent = yield* agentClient(node, family.secret)
    const expected = expectedSteps(family)
    const last = family.escalation.length
    const lastPaged = family.people.filter((p) => expected.get(p.id)!.includes(last))
    const done = yield* Effect.forEach(pages, (page) =>
      within(
        90,
        agent.pages.get({ params: { id: page.id } }),
        (p) => lastPaged.every((person) => p.notified.some((n) => n.userId === person.id && n.step === last)),
        `${page.title}: step ${last}`
      ), { concurrency: 4 })

    const runs: Array<StepRun> = []
    for (const page of done) {
      assert.strictEqual(page.status, "triggered", page.title)
      for (const person of family.people) {
        assert.deepStrictEqual(stepsOf(page, person.id), expected.get(person.id), `${page.title}: ${person.name} paged once at each of their steps`)
      }
      for (const n of page.notified) {
        const due = dueAt(family, page, n.step)
        assert.isAtLeast(Date.parse(n.at), due, `${page.title}: step ${n.step} ran ${due - Date.parse(n.at)} ms before its time`)
        runs.push({ title: page.title, step: n.step, userId: n.userId, due, at: Date.parse(n.at) })
      }
    }

    // One audit entry per escalation step of each page.
    const audit = yield* agent.audit.list({ params: { id: family.teamId }, query: { action: "page.escalated", limit: 200 } })
    if (!(audit instanceof AuditLogPage)) return yield* Effect.die(new Error("expected the audit log as JSON"))
    for (const page of done) {
      const steps = audit.entries
        .filter((e) => e.targetId === page.id)
        .map((e) => Number((e.metadata as { step?: unknown } | null)?.step))
        .sort((a, b) => a - b)
      assert.deepStrictEqual(steps, Array.from({ length: last }, (_, i) => i + 1), `${page.title}: one page.escalated entry per step`)
    }

    // Each phone: one time-sensitive alert per (page, step) that paged its person. Once the expected number is in
    // and the push queue holds nothing more for the phone, a repeated push (queued behind them) would be in too.
    const ids = new Set(done.map((p) => p.id))
    yield* Effect.forEach(family.people, (person) =>
      Effect.gen(function*() {
        const app = yield* personClient(node, person.session)
        const read = Effect.map(app.devices.deliveries({ params: { id: person.deviceId } }), (r) =>
          r.items.map((d) => d.payload as unknown as Alert).filter((a) => ids.has(a.herald?.pageId ?? "")))
        const want = done.flatMap((p) => expected.get(person.id)!.map((step) => `${p.id} step ${step}`)).sort()
        yield* within(15, read, (alerts) => alerts.length >= want.length, `${person.name}'s alerts`)
        yield* within(15, pushesQueued(family.env, [person.deviceId]), (n) => n === 0, `${person.name}'s pushes sent`)
        const alerts = yield* read
        assert.deepStrictEqual(alerts.map((a) => `${a.herald!.pageId} step ${a.herald!.step}`).sort(), want, `${person.name}'s phone: one alert per step`)
        for (const alert of alerts) assert.strictEqual(alert.aps?.["interruption-level"], "time-sensitive")
        // The inbox files a page once per person, whatever the steps.
        const inbox = yield* app.inbox.list({ query: { limit: 50 } })
        const filed = inbox.items.filter((i) => i.origin === "page").map((i) => i.id).sort()
        assert.deepStrictEqual(filed, done.map((p) => `page:${p.id}`).sort(), `${person.name}'s inbox: each page once`)
      }).pipe(Effect.orDie), { concurrency: 3, discard: true })
    return runs
  }).pipe(Effect.orDie)

/** Seconds, for the printed figures. */
export const seconds = (ms: number) => (ms / 1000).toFixed(1)
