/**
 * Signing in as a person does alone, in Chromium: an e-mailed link (the mail
 * taken by a real SMTP server in the test), then a passkey made in Settings
 * with a CDP virtual authenticator, signing out, and signing in again with the
 * passkey alone. And an MCP client's authorization asked for while signed
 * out: the consent page sends the person to sign in, and the e-mailed link
 * brings them back to it.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { Harness, harnessLayer, inTab, mailTo, makePerson, openTab, personApi, signedInTab } from "./support/harness.ts"

/** On the sign-in page in `tab`: asks for a link for `email`, and answers the link in the mail that came. */
const emailedLink = (tab: Effect.Success<ReturnType<typeof openTab>>, email: string) =>
  Effect.gen(function*() {
    yield* inTab(tab, async (page) => {
      await page.getByLabel("E-mail address").fill(email)
      await page.getByRole("button", { name: "Send me a sign-in link" }).click()
      await page.getByRole("status").filter({ hasText: "sign-in link is on its way" }).waitFor()
    })
    const mail = yield* mailTo(email)
    const link = /https?:\/\/\S+\/api\/app\/auth\/link\?token=hll_[0-9A-Za-z]+\S*/.exec(mail.text)?.[0]
    assert.isDefined(link, `a sign-in link in the mail:\n${mail.text}`)
    return link!
  })

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("signing in in the browser", (it) => {
  it.effect("by e-mail: the address typed on /sign-in gets a link; opening it signs the person in", () =>
    Effect.gen(function*() {
      const { origin } = yield* Harness
      const ada = yield* makePerson("Ada Lovelace")
      const tab = yield* openTab()

      yield* inTab(tab, async (page) => {
        // Signed out, the console sends the person to sign in.
        await page.goto("/inbox")
        await page.waitForURL("**/sign-in")
      })

      const link = yield* emailedLink(tab, ada.email)
      assert.strictEqual(new URL(link).origin, origin, "the link is on Herald's public URL")

      yield* inTab(tab, async (page) => {
        await page.goto(link)
        // Back where it asked to go (the inbox), signed in.
        await page.waitForURL("**/inbox")
        await page.getByRole("heading", { name: "Inbox", level: 1 }).waitFor()
        await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click()
        await page.getByText(ada.name, { exact: true }).waitFor()
        await page.getByText(ada.email).waitFor()
      })

      // The link worked once: opened again (here in a browser signed out) it says so on the sign-in page.
      const elsewhere = yield* openTab()
      yield* inTab(elsewhere, async (page) => {
        await page.goto(link)
        await page.waitForURL("**/sign-in?error=link")
        await page.getByRole("alert").filter({ hasText: "That sign-in link did not work" }).waitFor()
      })
    }))

  it.effect("with a passkey: made in Settings, then signing out and in again needs no e-mail", () =>
    Effect.gen(function*() {
      const grace = yield* makePerson("Grace Hopper")
      const tab = yield* signedInTab(grace)
      // A platform authenticator with user verification, as a phone's screen lock is.
      const cdp = yield* Effect.promise(() => tab.context.newCDPSession(tab.page))
      yield* Effect.promise(async () => {
        await cdp.send("WebAuthn.enable")
        await cdp.send("WebAuthn.addVirtualAuthenticator", {
          options: {
            protocol: "ctap2",
            transport: "internal",
            hasResidentKey: true,
            hasUserVerification: true,
            isUserVerified: true,
            automaticPresenceSimulation: true
          }
        })
      })

      yield* inTab(tab, async (page) => {
        await page.goto("/settings")
        await page.getByText("No passkeys yet.").waitFor()
        await page.getByLabel("Name", { exact: true }).fill("Test laptop")
        await page.getByRole("button", { name: "Add a passkey" }).click()
        await page.getByRole("region", { name: "Passkeys" }).getByText("Test laptop").waitFor()
      })
      const app = yield* personApi(grace.session)
      const made = yield* app.passkeys.list()
      assert.deepStrictEqual(made.items.map((p) => [p.name, p.lastUsedAt]), [["Test laptop", null]])

      yield* inTab(tab, async (page) => {
        await page.getByRole("region", { name: "Account" }).getByRole("button", { name: "Sign out" }).click()
        await page.waitForURL("**/sign-in")
        await page.goto("/settings")
        await page.waitForURL("**/sign-in")
      })
      // Signing out revoked the session the cookie carried.
      const gone = yield* Effect.flip(app.me.get())
      assert.strictEqual(gone._tag, "Unauthorized")

      yield* inTab(tab, async (page) => {
        await page.getByRole("button", { name: "Sign in with a passkey" }).click()
        // Back to the page that asked for sign-in, signed in as Grace.
        await page.waitForURL("**/settings")
        await page.getByText(grace.email).waitFor()
        await page.getByRole("region", { name: "Passkeys" }).getByText("Test laptop").waitFor()
      })
      const cookies = yield* Effect.promise(() => tab.context.cookies())
      const session = cookies.find((c) => c.name === "herald_session")
      assert.isDefined(session)
      assert.deepStrictEqual([session!.httpOnly, session!.sameSite], [true, "Lax"])
      const again = yield* personApi(session!.value)
      assert.strictEqual((yield* again.me.get()).id, grace.id)
      const used = yield* again.passkeys.list()
      assert.isNotNull(used.items[0]?.lastUsedAt ?? null, "the passkey's last use is recorded")
    }))

  it.effect("an application's authorization, signed out: sign in by e-mail from its page and land back on its consent page", () =>
    Effect.gen(function*() {
      const { origin } = yield* Harness
      const ada = yield* makePerson("Ada Byron")
      const registered = yield* Effect.promise(() =>
        fetch(`${origin}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ client_name: "Deploy agent", redirect_uris: ["http://127.0.0.1:33418/callback"], token_endpoint_auth_method: "none" })
        }).then((r) => r.json() as Promise<{ client_id: string }>)
      )
      const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url")
      const authorize = `/oauth/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: registered.client_id,
        redirect_uri: "http://127.0.0.1:33418/callback",
        code_challenge: challenge,
        code_challenge_method: "S256",
        state: "st-1"
      })}`
      const tab = yield* openTab()

      yield* inTab(tab, async (page) => {
        await page.goto(authorize)
        await page.getByRole("heading", { name: "Sign in to Herald" }).waitFor()
        await page.getByRole("link", { name: "Sign in" }).click()
        await page.waitForURL("**/sign-in?next=**")
      })

      const link = yield* emailedLink(tab, ada.email)

      yield* inTab(tab, async (page) => {
        await page.goto(link)
        // The consent page of that very request, now signed in.
        await page.getByRole("heading", { name: "Connect an application" }).waitFor()
        await page.getByText("Deploy agent").first().waitFor()
        await page.getByText(ada.email).waitFor()
        assert.strictEqual(new URL(page.url()).pathname, "/oauth/authorize")
      })
    }))
})
