/**
 * Passkeys (issue 32), end to end over HTTP with a software authenticator
 * that signs real ES256 attestations and assertions (softAuthenticator.ts):
 * a signed-in person registers one, anyone signs in with it without a user
 * name (the cookie the Person API takes), and every check that matters
 * refuses: a ceremony used twice or of another person, another origin or RP
 * id, another key's signature, a counter that went back, a removed passkey.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makePerson, personClient, testServerLayer } from "../../../../test/support/server.ts"
import { attributesOf, browse, PUBLIC_ORIGIN, sessionOf } from "./browser.ts"
import { create, get } from "./softAuthenticator.ts"
import type { SoftCredential } from "./softAuthenticator.ts"

const here = { origin: PUBLIC_ORIGIN, rpId: "localhost" }

/** A person with a bearer session and one passkey registered through the Person API. */
const personWithPasskey = (label: string) =>
  Effect.gen(function*() {
    const { person, session } = yield* makePerson(label)
    const app = yield* personClient(session)
    const started = yield* app.passkeys.options()
    const made = create(started.options, here)
    const passkey = yield* app.passkeys.register({ payload: { challengeId: started.challengeId, response: made.json, name: `${label}'s laptop` } })
    return { person, session, app, credential: made.credential, passkey }
  })

/** A passkey sign-in: the options, then the assertion `answer` makes of them. */
const signIn = (answer: (options: { challenge: string }) => unknown, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const started = yield* browse("/api/app/auth/passkey/options", { method: "POST", headers })
    assert.strictEqual(started.status, 200, JSON.stringify(started.body))
    return yield* browse("/api/app/auth/passkey", {
      json: { challengeId: started.body.challengeId, response: answer(started.body.options) },
      headers
    })
  })

// Many ceremonies from one address: the per-address sign-in limit is tested on its own (emailSignIn.test.ts).
layer(testServerLayer({ HERALD_ADDRESS_LIMIT_SIGN_IN_PER_MINUTE: "0" }), { timeout: "60 seconds", excludeTestServices: true })("passkeys", (it) => {
  it.effect("register from a session, then sign in with no user name: the cookie, the person, the use recorded", () =>
    Effect.gen(function*() {
      const { person, session } = yield* makePerson("Ada")
      const app = yield* personClient(session)
      const started = yield* app.passkeys.options()
      assert.match(started.challengeId, /^wac_/)
      const options = started.options
      assert.deepStrictEqual(options.rp, { name: "Herald", id: "localhost" })
      assert.strictEqual(options.user.name, person.email)
      assert.strictEqual(options.user.displayName, "Ada")
      assert.strictEqual(Buffer.from(options.user.id, "base64url").toString(), person.id)
      assert.strictEqual(options.authenticatorSelection?.residentKey, "required")
      assert.strictEqual(options.authenticatorSelection?.userVerification, "preferred")
      assert.strictEqual(options.attestation, "none")
      assert.deepStrictEqual(options.excludeCredentials, [])
      assert.isTrue(options.pubKeyCredParams.some((p) => p.alg === -7))

      const made = create(options, here)
      const passkey = yield* app.passkeys.register({ payload: { challengeId: started.challengeId, response: made.json, name: "Laptop" } })
      assert.match(passkey.id, /^pky_/)
      assert.deepStrictEqual([passkey.name, passkey.lastUsedAt], ["Laptop", null])

      // The ceremony is spent.
      const twice = yield* Effect.flip(app.passkeys.register({ payload: { challengeId: started.challengeId, response: made.json } }))
      assert.strictEqual(twice._tag, "BadRequest")

      // A second registration excludes it.
      const next = yield* app.passkeys.options()
      assert.deepStrictEqual(next.options.excludeCredentials?.map((c) => c.id), [made.json.id])

      const signedIn = yield* signIn((o) => {
        assert.strictEqual((o as { rpId?: string }).rpId, "localhost")
        assert.strictEqual((o as { userVerification?: string }).userVerification, "preferred")
        // No user name asked: no credentials named, the authenticator offers the person's own.
        const allow = (o as { allowCredentials?: ReadonlyArray<unknown> }).allowCredentials
        assert.isTrue(allow === undefined || allow.length === 0)
        return get(made.credential, o, here)
      })
      assert.strictEqual(signedIn.status, 200)
      assert.deepStrictEqual(signedIn.body, { id: person.id, email: person.email, name: "Ada" })
      assert.strictEqual(signedIn.headers.get("cache-control"), "no-store")
      assert.deepStrictEqual(attributesOf(signedIn.cookies[0]!), ["httponly", "max-age=2592000", "path=/", "samesite=lax", "secure"])
      const cookie = sessionOf(signedIn.cookies)!
      const me = yield* browse("/api/app/me", { cookie })
      assert.deepStrictEqual([me.status, me.body.id], [200, person.id])

      const listed = yield* app.passkeys.list()
      assert.deepStrictEqual(listed.items.map((p) => p.id), [passkey.id])
      assert.isNotNull(listed.items[0]!.lastUsedAt)
    }))

  it.effect("a ceremony works once; an unknown one, another origin or RP id, another key, an old counter: 401", () =>
    Effect.gen(function*() {
      const { credential } = yield* personWithPasskey("Grace")
      const refusedWith = (answer: Effect.Success<ReturnType<typeof signIn>>, message: string) => {
        assert.deepStrictEqual([answer.status, answer.body.code], [401, "UNAUTHORIZED"], JSON.stringify(answer.body))
        assert.include(answer.body.error, message)
        assert.deepStrictEqual(answer.cookies, [])
      }

      // Used twice.
      const started = yield* browse("/api/app/auth/passkey/options", { method: "POST" })
      const assertion = get(credential, started.body.options, here)
      const first = yield* browse("/api/app/auth/passkey", { json: { challengeId: started.body.challengeId, response: assertion } })
      assert.strictEqual(first.status, 200)
      refusedWith(
        yield* browse("/api/app/auth/passkey", { json: { challengeId: started.body.challengeId, response: assertion } }),
        "Unknown, used or expired sign-in"
      )
      refusedWith(
        yield* browse("/api/app/auth/passkey", { json: { challengeId: "wac_unknown", response: assertion } }),
        "Unknown, used or expired sign-in"
      )

      refusedWith(yield* signIn((o) => get(credential, o, { ...here, origin: "https://evil.example" })), "not accepted")
      refusedWith(yield* signIn((o) => get(credential, o, { ...here, rpId: "evil.example" })), "not accepted")
      // Signed with another key under this credential's id.
      const other = create({ challenge: "x", user: { id: "eA" } }, here).credential
      refusedWith(yield* signIn((o) => get({ ...other, id: credential.id, userHandle: credential.userHandle }, o, here)), "not accepted")
      // The counter went back: a cloned authenticator.
      refusedWith(yield* signIn((o) => get(credential, o, here, { counter: 1 })), "not accepted")
      // The user handle names someone else.
      refusedWith(
        yield* signIn((o) => get(credential, o, here, { userHandle: Buffer.from("usr_other").toString("base64url") })),
        "user handle"
      )
      // Still works with the right answer (the refusals changed nothing).
      assert.strictEqual((yield* signIn((o) => get(credential, o, here))).status, 200)
    }))

  it.effect("registration: another person's ceremony, a bad attestation, a passkey twice; list and remove", () =>
    Effect.gen(function*() {
      const ada = yield* personWithPasskey("Ada2")
      const bob = yield* makePerson("Bob")
      const bobApp = yield* personClient(bob.session)

      // Ada's ceremony is not Bob's to finish.
      const adaStarted = yield* ada.app.passkeys.options()
      const stolen = yield* Effect.flip(bobApp.passkeys.register({
        payload: { challengeId: adaStarted.challengeId, response: create(adaStarted.options, here).json }
      }))
      assert.strictEqual(stolen._tag, "BadRequest")

      // Made for another origin: refused, with the reason.
      const started = yield* bobApp.passkeys.options()
      const wrong = yield* Effect.flip(bobApp.passkeys.register({
        payload: { challengeId: started.challengeId, response: create(started.options, { ...here, origin: "https://evil.example" }).json }
      }))
      assert.strictEqual(wrong._tag, "BadRequest")
      assert.isTrue(wrong._tag === "BadRequest" && wrong.error.startsWith("The passkey could not be verified"))

      // Ada's passkey registered again (by Bob, or by Ada): 409.
      const again = yield* bobApp.passkeys.options()
      const twice = yield* Effect.flip(bobApp.passkeys.register({
        payload: { challengeId: again.challengeId, response: create(again.options, here, { same: ada.credential }).json }
      }))
      assert.strictEqual(twice._tag, "Conflict")

      // Bob cannot see or remove Ada's; Ada removes hers, and it signs no one in after.
      assert.deepStrictEqual((yield* bobApp.passkeys.list()).items, [])
      const notBobs = yield* Effect.flip(bobApp.passkeys.remove({ params: { id: ada.passkey.id } }))
      assert.strictEqual(notBobs._tag, "NotFound")
      const listed = yield* ada.app.passkeys.list()
      assert.deepStrictEqual(listed.items.map((p) => [p.id, p.name]), [[ada.passkey.id, "Ada2's laptop"]])
      yield* ada.app.passkeys.remove({ params: { id: ada.passkey.id } })
      assert.deepStrictEqual((yield* ada.app.passkeys.list()).items, [])
      const gone = yield* signIn((o) => get(ada.credential as SoftCredential, o, here))
      assert.deepStrictEqual([gone.status, gone.body.error], [401, "This passkey is not registered with Herald."])

      // Malformed answers are refused by the schema before any work.
      const bad = yield* browse("/api/app/auth/passkey", { json: { challengeId: "wac_x", response: { id: "!!" } } })
      assert.deepStrictEqual([bad.status, bad.body.code], [400, "VALIDATION_FAILED"])
    }))

  it.effect("the sign-in routes refuse a request from another origin", () =>
    Effect.gen(function*() {
      const foreign = { origin: "https://evil.example" }
      const options = yield* browse("/api/app/auth/passkey/options", { method: "POST", headers: foreign })
      assert.deepStrictEqual([options.status, options.body.code], [403, "CSRF_REJECTED"])
      const { credential } = yield* personWithPasskey("Origin")
      const answer = yield* signIn((o) => get(credential, o, here))
      assert.strictEqual(answer.status, 200)
      const started = yield* browse("/api/app/auth/passkey/options", { method: "POST" })
      const refused = yield* browse("/api/app/auth/passkey", {
        json: { challengeId: started.body.challengeId, response: get(credential, started.body.options, here) },
        headers: foreign
      })
      assert.deepStrictEqual([refused.status, refused.body.code, refused.cookies], [403, "CSRF_REJECTED", []])
    }))
})
