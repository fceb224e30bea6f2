/**
 * `herald admin session link` end to end: the CLI makes a one-time sign-in
 * link on the public URL as the server computes it, and a running `herald
 * serve` on the same database redeems it once — the browser gets the
 * `herald_session` cookie (a Person API session) and goes back to `--next`.
 * A `--next` that is not an authorization request and an unknown person are
 * refused by the command.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { childDatabase } from "../support/database.ts"
import { cli, cliJson, startServer } from "../support/process.ts"
import { personOn } from "../support/serverClients.ts"

interface Link {
  readonly url: string
  readonly expiresAt: string
  readonly userId: string
}

/** A GET as a browser sends it to the running server, redirects not followed. */
const open = (baseUrl: string, url: string) =>
  Effect.promise(async () => {
    const u = new URL(url)
    const response = await fetch(`${baseUrl}${u.pathname}${u.search}`, { redirect: "manual" })
    return { status: response.status, location: response.headers.get("location"), cookies: response.headers.getSetCookie(), body: await response.text() }
  })

describe("herald admin session link", () => {
  it.effect("prints a one-time link that a running server redeems once into a session cookie", () =>
    Effect.gen(function*() {
      const database = yield* childDatabase
      const server = yield* startServer(database.env)
      const port = new URL(server.baseUrl).port
      // The CLI computes the URL as the server does: HERALD_PUBLIC_URL, else http://localhost:$PORT.
      const env = { ...database.env, PORT: port }
      // The person is set-up (made on the database as `admin user create` would); the link is the CLI's to make.
      const person = yield* personOn(env, { email: "ada@example.test", name: "Ada" })

      const next = "/oauth/authorize?response_type=code&client_id=ocl_abc&state=s1"
      const link = yield* cliJson<Link>(["admin", "session", "link", "--user", "ada@example.test", "--next", next], env)
      assert.deepStrictEqual(Object.keys(link).sort(), ["expiresAt", "url", "userId"])
      assert.strictEqual(link.userId, person.id)
      const url = new URL(link.url)
      assert.strictEqual(`${url.origin}${url.pathname}`, `http://localhost:${port}/oauth/sign-in`)
      assert.match(url.searchParams.get("token") ?? "", /^hll_[0-9A-Za-z]{49}$/)
      assert.strictEqual(url.searchParams.get("next"), next)
      const minutes = (Date.parse(link.expiresAt) - Date.now()) / 60_000
      assert.isTrue(minutes > 13 && minutes <= 15, String(minutes))

      const first = yield* open(server.baseUrl, link.url)
      assert.deepStrictEqual([first.status, first.location], [302, next])
      const session = /^herald_session=(hls_[^;]+);/.exec(first.cookies[0] ?? "")?.[1]
      assert.isDefined(session)
      const me = yield* Effect.promise(() =>
        fetch(`${server.baseUrl}/api/app/me`, { headers: { authorization: `Bearer ${session}` } }).then((r) => r.json() as Promise<{ id: string }>))
      assert.strictEqual(me.id, person.id)

      const second = yield* open(server.baseUrl, link.url)
      assert.deepStrictEqual([second.status, second.cookies], [400, []])
      assert.include(second.body, "This sign-in link does not work")

      // By id, without --next, on a public URL: the link says where to go; the page names the person.
      const plain = yield* cliJson<Link>(["admin", "session", "link", "--user", person.id], {
        ...env,
        HERALD_PUBLIC_URL: "https://herald.example/"
      })
      assert.match(plain.url, /^https:\/\/herald\.example\/oauth\/sign-in\?token=hll_[0-9A-Za-z]{49}$/)
      const page = yield* open(server.baseUrl, plain.url)
      assert.strictEqual(page.status, 200)
      assert.include(page.body, "Signed in as Ada &lt;ada@example.test&gt;")

      const elsewhere = yield* cli(["admin", "session", "link", "--user", person.id, "--next", "https://evil.example/"], env)
      assert.strictEqual(elsewhere.code, 1)
      assert.include(elsewhere.stderr, "next: Expected a path starting /oauth/authorize")
      assert.strictEqual(elsewhere.stdout, "")
      const nobody = yield* cli(["admin", "session", "link", "--user", "nobody@example.test"], env)
      assert.strictEqual(nobody.code, 1)
      assert.include(nobody.stderr, "Person nobody@example.test not found.")
    }), { timeout: 180_000 })
})
