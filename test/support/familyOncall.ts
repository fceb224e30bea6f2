/**
 * The family on call that the page tests against real processes share (a
 * cluster in test/e2e/cluster/family.ts, one restarted `herald serve` in
 * test/e2e/pageEscalation.test.ts): Ann, Bob and Cid with an iOS sandbox phone
 * each, a family Ann owns that Bob and Cid joined by invite, and an on-call
 * group over them where Bob is on call and Cid is next. The people are made
 * by the caller (through Identity or the CLI); the rest goes through the API.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { agentClient, personClient, personOn } from "./serverClients.ts"

export interface Escalation {
  readonly afterMinutes: number
  readonly target: "next" | "group"
}

export interface Someone {
  readonly id: string
  readonly name: string
  readonly email: string
  readonly session: string
}

/**
 * A person and a session on the database of `env` (`<name>@example.test`), made as `herald admin` makes them
 * (serverClients.ts `personOn`) without two CLI processes: the CLI's own tests run the commands.
 */
export const dbPerson = (env: Record<string, string>, name: string) =>
  Effect.gen(function*() {
    const email = `${name.toLowerCase()}@example.test`
    const { id, session } = yield* personOn(env, { email, name })
    return { id, name, email, session }
  })

/** `someone` with a phone registered through the Person API (push token `page-<name>`). */
export const withPhone = <P extends Someone>(baseUrl: string, someone: P) =>
  Effect.gen(function*() {
    const app = yield* personClient(baseUrl, someone.session)
    const device = yield* app.devices.register({
      payload: { platform: "ios", deviceName: `${someone.name}'s phone`, pushToken: `page-${someone.name}` }
    })
    return { ...someone, deviceId: device.id }
  })

/** Ann's pager token, and the family and on-call group around Ann, Bob and Cid, on the process at `baseUrl`. */
export const familyOnCall = (baseUrl: string, [ann, bob, cid]: readonly [Someone, Someone, Someone], escalation: ReadonlyArray<Escalation>) =>
  Effect.gen(function*() {
    const { secret } = yield* (yield* personClient(baseUrl, ann.session)).tokens.create({
      payload: { name: "pager", scopes: ["teams:read", "teams:write", "oncall:read", "oncall:write"] }
    })
    const agent = yield* agentClient(baseUrl, secret)
    const family = yield* agent.teams.create({ payload: { kind: "family", name: "The family" } })
    for (const member of [bob, cid]) {
      const invite = yield* agent.teamInvites.create({ params: { id: family.id }, payload: { email: member.email } })
      yield* (yield* personClient(baseUrl, member.session)).invites.accept({ payload: { code: invite.code } })
    }
    // Bob's shift runs from a minute ago to the next handoff, at least 11 hours away; Cid is next.
    const handoffHour = new Date(Date.now() + 12 * 3_600_000).getUTCHours()
    const group = yield* agent.oncall.create({
      params: { id: family.id },
      payload: {
        name: "Home",
        rotation: {
          members: [bob.id, cid.id, ann.id],
          period: "daily",
          handoffAt: `${String(handoffHour).padStart(2, "0")}:00`,
          timezone: "UTC",
          startsAt: new Date(Date.now() - 60_000).toISOString()
        },
        escalation: escalation.map((s) => ({ ...s }))
      }
    })
    assert.strictEqual(group.current?.person.userId, bob.id, "Bob is on call")
    return { secret, agent, teamId: family.id, groupId: group.id }
  })
