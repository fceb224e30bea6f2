/**
 * The fixture of the console's browser tests: one real `herald serve` per test
 * file on a fresh database, with a real SMTP server (sign-in mail) and a fake
 * Web Push service on loopback (`HERALD_ALLOW_PRIVATE_NETWORK_TARGETS=1`),
 * and one headless Chromium. Each test opens its own browser profile and
 * makes its own people (the operator's code: test/support/serverClients.ts personOn), so tests share
 * nothing but the processes.
 *
 * The browser talks to `http://localhost:<port>`, the server's default public
 * URL: localhost is a secure context, so service workers, Web Push and
 * WebAuthn work there over plain http, and the cookie's Origin check matches.
 */
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import type { Scope } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { Browser, BrowserContext, BrowserContextOptions, ConsoleMessage, Page } from "playwright-core"
import { Smtp, smtpUrl } from "../../../packages/server/test/auth/smtp.ts"
import type { ReceivedMail } from "../../../packages/server/test/auth/smtp.ts"
import { FakePushService } from "../../../packages/server/test/push/webPushSupport.ts"
import { childDatabase } from "../../support/database.ts"
import { startServer } from "../../support/process.ts"
import type { ServerProcess } from "../../support/process.ts"
import { findChromium, launchChromium, newContext } from "./chromium.ts"
import { personOn } from "../../support/serverClients.ts"

export interface Person {
  readonly id: string
  readonly email: string
  readonly name: string
  /** A Person API session (`hls_…`), as `herald admin session create` prints it. */
  readonly session: string
}

export class Harness extends Context.Service<Harness, {
  /** The public origin the browser uses: `http://localhost:<port>`. */
  readonly origin: string
  readonly server: ServerProcess
  /** The environment of a `herald` CLI run against this server's database. */
  readonly cliEnv: Record<string, string>
  readonly browser: Browser
  readonly smtp: Smtp["Service"]
  readonly push: FakePushService["Service"]
}>()("test/browser/Harness") {}

/** The harness's layer; `env` adds settings of the server. */
export const harnessLayer = (env: Record<string, string> = {}) =>
  Layer.effect(Harness, Effect.gen(function*() {
    // First: no browser fails the file at once, with the way to get one.
    yield* Effect.sync(findChromium)
    const smtp = yield* Smtp
    const push = yield* FakePushService
    // Chromium starts while the server does: neither waits on the other.
    const [browser, { database, server }] = yield* Effect.all([
      launchChromium,
      Effect.gen(function*() {
        const database = yield* childDatabase
        const server = yield* startServer({
          ...database.env,
          HERALD_SMTP_URL: smtpUrl(smtp.port),
          HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1",
          ...env
        })
        return { database, server }
      })
    ], { concurrency: "unbounded" })
    const port = new URL(server.baseUrl).port
    return Harness.of({
      origin: `http://localhost:${port}`,
      server,
      cliEnv: { ...database.env, PORT: port },
      browser,
      smtp,
      push
    })
  })).pipe(Layer.provide(Layer.merge(Smtp.layer, FakePushService.layer)))

/** A unique address: the tests of a file share one database. */
export const uniqueEmail = (label: string) => `${label.toLowerCase().replace(/[^a-z]/g, "")}-${randomBytes(4).toString("hex")}@example.test`

/** A new person and a session of theirs, as the operator's `herald admin` commands make them (serverClients.ts personOn). */
export const makePerson = (name: string) =>
  Effect.flatMap(Harness, ({ cliEnv }): Effect.Effect<Person> => {
    const email = uniqueEmail(name)
    return Effect.map(personOn(cliEnv, { email, name }), ({ id, session }) => ({ id, email, name, session }))
  })

/** The Person API of a session, as a phone app or script uses it (bearer token). */
export const personApi = (session: string) =>
  Effect.flatMap(Harness, ({ server }) =>
    Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl: server.baseUrl, token: session, retries: 0 })))

/** An agent of `person`: an API token with `scopes` made through the Person API, and the Agent API client on it. */
export const agentOf = (person: Person, scopes: ReadonlyArray<Scope>) =>
  Effect.gen(function*() {
    const { server } = yield* Harness
    const app = yield* personApi(person.session)
    const created = yield* app.tokens.create({ payload: { name: `agent of ${person.name}`, scopes: [...scopes] } })
    const client = yield* Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl: server.baseUrl, token: created.secret, retries: 0 }))
    return { client, secret: created.secret }
  }).pipe(Effect.orDie)

/** A browser tab of a fresh profile, with what went wrong in it (uncaught errors) kept for the test's end. */
export interface Tab {
  readonly context: BrowserContext
  readonly page: Page
  /** Uncaught exceptions of the page: a console with any is broken, whatever it shows. */
  readonly errors: Array<string>
  /** The page's console messages of level error (failed loads included), for diagnosing a failure. */
  readonly consoleErrors: Array<string>
  /** Person API answers of status 400 and above, with their bodies, for diagnosing a failure. */
  readonly failedCalls: Array<string>
}

/** A fresh browser profile and a tab in it, closed with the test's scope. */
export const openTab = (options: BrowserContextOptions = {}) =>
  Effect.gen(function*() {
    const { browser, origin } = yield* Harness
    const context = yield* newContext(browser, { baseURL: origin, ...options })
    const page = yield* Effect.promise(() => context.newPage())
    const errors: Array<string> = []
    const consoleErrors: Array<string> = []
    const failedCalls: Array<string> = []
    page.on("pageerror", (error) => errors.push(error.stack ?? error.message))
    page.on("console", (message: ConsoleMessage) => {
      if (message.type() === "error") consoleErrors.push(message.text())
    })
    context.on("response", (response) => {
      if (response.status() < 400 || !response.url().includes("/api/")) return
      const call = `${response.request().method()} ${new URL(response.url()).pathname} → ${response.status()}`
      response.text().then((body) => failedCalls.push(`${call} ${body.slice(0, 600)}`), () => failedCalls.push(call))
    })
    page.setDefaultTimeout(30_000)
    return { context, page, errors, consoleErrors, failedCalls } satisfies Tab
  })

/** A tab already signed in as `person`: their session in the `herald_session` cookie, as a sign-in would leave it. */
export const signedInTab = (person: Person, options: BrowserContextOptions = {}) =>
  Effect.gen(function*() {
    const { origin } = yield* Harness
    const tab = yield* openTab(options)
    yield* Effect.promise(() =>
      tab.context.addCookies([{ name: "herald_session", value: person.session, url: origin, httpOnly: true, secure: true, sameSite: "Lax" }]))
    return tab
  })

/** Waits (polling, at most 20 s) for the `n`-th mail to `address` and answers it. */
export const mailTo = (address: string, n = 1) =>
  Effect.flatMap(Harness, ({ smtp }) =>
    Effect.promise(async (): Promise<ReceivedMail> => {
      const deadline = Date.now() + 20_000
      for (;;) {
        const mails = smtp.to(address)
        if (mails.length >= n) return mails[n - 1]!
        if (Date.now() > deadline) throw new Error(`no mail #${n} to ${address} within 20 s (mails: ${smtp.mails.map((m) => m.to.join(",")).join("; ")})`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }))

/** Polls `read` (every 50 ms, at most `seconds`) until `check` holds; for what happens outside the page. */
export const until = async <A>(what: string, read: () => Promise<A>, check: (a: A) => boolean, seconds = 20): Promise<A> => {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const value = await read()
    if (check(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s (last: ${JSON.stringify(value)?.slice(0, 500)})`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The tab's state for a failure message: its URL, what it shows, its errors. */
export const describeTab = async (tab: Tab) =>
  `at ${tab.page.url()}\nshows: ${(await tab.page.locator("body").innerText().catch(() => "?")).slice(0, 1500)}\n` +
  `page errors: ${tab.errors.join("\n") || "none"}\nconsole errors: ${tab.consoleErrors.join("\n") || "none"}\n` +
  `failed Person API calls: ${tab.failedCalls.join("\n") || "none"}`

/**
 * Runs a user path in the tab; when it throws, the error says where the tab was and what it showed,
 * and a tab that threw an uncaught exception fails the test even if the path went through.
 */
export const inTab = <A>(tab: Tab, path: (page: Page) => Promise<A>) =>
  Effect.promise(async () => {
    let result: A
    try {
      result = await path(tab.page)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      throw new Error(`${message}\n--- the tab ${await describeTab(tab)}`, { cause: error })
    }
    if (tab.errors.length > 0) throw new Error(`uncaught errors in the page:\n${tab.errors.join("\n")}`)
    return result
  })
