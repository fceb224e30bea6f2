/**
 * Long-polls end with their token (issue 20, item 4): a wait in flight answers
 * 401 when its token is revoked (through the Person API, or on another node and
 * seen by the revocation poll) or expires, well before the prompt's timeout; a
 * wait holding another token of the same person goes on; no watcher leaks.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Credentials } from "../../src/auth/Credentials.ts"
import { IdentityRepo } from "../../src/identity/IdentityRepo.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { agentClient, makeAgent, TestServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>
type Client = Agent["client"]

const scopes = ["interactions:create", "interactions:read"] as const

const ask = (client: Client) =>
  Effect.map(
    client.interactions.create({ payload: { kind: "approval", title: "Ship it?", prompt: "One commit." } }),
    (created) => created.interaction.id
  )

/** A wait far longer than any of these tests: its end can only come from the token. */
const longWait = (client: Client, id: string) =>
  Effect.forkChild(Effect.flip(client.interactions.wait({ params: { id }, query: { timeout: 50 } })))

/** Until the server holds `count` waits for the token: the wait is in flight, past authentication. */
const holding = (tokenId: string, count: number) =>
  Effect.flatMap(Effect.service(Credentials), (credentials) =>
    eventually(Effect.sync(() => credentials.holding(tokenId)), (n) => n === count))

/** The 401's message, failing the test on any other error. */
const unauthorized = (error: Effect.Success<ReturnType<typeof longWait>> extends Fiber.Fiber<infer E, infer _> ? E : never) => {
  if (error._tag !== "Unauthorized") return assert.fail(`expected Unauthorized, got ${error._tag}`)
  assert.strictEqual(error.code, "UNAUTHORIZED")
  return error.error
}

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("waits end with their token", (it) => {
  it.effect("a revocation through the Person API answers the wait 401 at once; another token's wait goes on", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const second = yield* agent.app.tokens.create({ payload: { name: "second agent", scopes: [...scopes] } })
      const other = yield* agentClient(second.secret)
      const mine = yield* ask(agent.client)
      const theirs = yield* ask(other)

      const revokedWait = yield* longWait(agent.client, mine)
      const otherWait = yield* Effect.forkChild(other.interactions.wait({ params: { id: theirs }, query: { timeout: 50 } }))
      yield* holding(agent.token.id, 1)
      yield* holding(second.token.id, 1)

      const revokedAt = Date.now()
      yield* agent.app.tokens.revoke({ params: { id: agent.token.id } })
      const refused = yield* Fiber.join(revokedWait)
      assert.isBelow(Date.now() - revokedAt, 2000)
      assert.strictEqual(unauthorized(refused), "The token was revoked while this request waited.")
      // The ended wait leaves nothing behind; the other token's wait still holds.
      yield* holding(agent.token.id, 0)
      assert.strictEqual((yield* Effect.service(Credentials)).holding(second.token.id), 1)

      yield* agent.app.interactions.answer({ params: { id: theirs }, payload: { status: "approved" } })
      const answered = yield* Fiber.join(otherWait)
      assert.strictEqual(answered.status, "approved")
      yield* holding(second.token.id, 0)
    }))

  it.effect("a revocation made elsewhere (not through this node) ends the wait at the next revocation poll", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const id = yield* ask(agent.client)
      const wait = yield* longWait(agent.client, id)
      yield* holding(agent.token.id, 1)

      // As another node or the CLI would: the row only, this node's cache untouched.
      const revokedAt = Date.now()
      yield* Effect.flatMap(Effect.service(IdentityRepo), (repo) => repo.revokeToken(agent.person.id, agent.token.id))
      const refused = yield* Fiber.join(wait)
      assert.isBelow(Date.now() - revokedAt, 3000)
      assert.strictEqual(unauthorized(refused), "The token was revoked while this request waited.")
      yield* holding(agent.token.id, 0)
    }))

  it.effect("a token that expires during the wait answers it 401 at its expiresAt", () =>
    Effect.gen(function*() {
      const expiresAt = new Date(Date.now() + 3000).toISOString()
      const agent = yield* makeAgent([...scopes], { expiresAt })
      const id = yield* ask(agent.client)
      const wait = yield* longWait(agent.client, id)
      yield* holding(agent.token.id, 1)

      const refused = yield* Fiber.join(wait)
      assert.isAtLeast(Date.now(), Date.parse(expiresAt))
      assert.isBelow(Date.now() - Date.parse(expiresAt), 2000)
      assert.strictEqual(unauthorized(refused), "The token expired while this request waited.")
      yield* holding(agent.token.id, 0)
      // Afterwards the token is refused at the door, as before.
      const later = yield* Effect.flip(agent.client.interactions.get({ params: { id } }))
      assert.strictEqual(unauthorized(later), "Expired API token.")
    }))
})
