/**
 * Screenshots of the console for docs/console and docs/walkthroughs: a real `herald
 * serve` on a fresh embedded database, a person's console filled with sample
 * data (test/browser/support/sampleData.ts: notifications, prompts, live
 * activities, phones, tokens, a family with an on-call page), each main page
 * taken in Debian's Chromium at a phone's width (390×844, drawn at 2×) and a
 * desktop's (1280×800). Run by hand, not in CI:
 *
 *   node scripts/console/screenshots.ts [page…]
 *
 * writes docs/console/<page>-phone.png and <page>-desktop.png (all pages, or
 * those named). Needs Chromium (`apt-get install -y chromium`, or CHROMIUM_PATH).
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { launchChromium, newContext } from "../../test/browser/support/chromium.ts"
import { seedSample } from "../../test/browser/support/sampleData.ts"
import type { Sample } from "../../test/browser/support/sampleData.ts"
import { startServer } from "../../test/support/process.ts"

const root = path.resolve(import.meta.dirname, "../..")
const out = path.join(root, "docs/console")

interface Shot {
  readonly name: string
  /** The page's path for the sample; signed out when `signedOut`. */
  readonly path: (sample: Sample) => string
  readonly signedOut?: boolean
  /** Brings the page to the state worth showing, after it drew. */
  readonly prepare?: (page: Page) => Promise<void>
}

const shots: ReadonlyArray<Shot> = [
  { name: "sign-in", path: () => "/sign-in", signedOut: true },
  { name: "inbox", path: () => "/inbox" },
  { name: "prompt", path: (s) => `/prompts/${s.promptId}` },
  { name: "activities", path: () => "/activities" },
  { name: "devices", path: () => "/devices" },
  { name: "tokens", path: () => "/tokens" },
  { name: "teams", path: (s) => `/teams/${s.familyId}` },
  { name: "join", path: (s) => `/join/${s.inviteCode}` },
  { name: "oncall", path: () => "/oncall" },
  { name: "quiet-hours", path: () => "/quiet-hours" },
  { name: "email", path: () => "/email" }
]

const viewports = [
  { label: "phone", viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
  { label: "desktop", viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false }
] as const

/** Waits until the page drew its content: a heading in the main landmark and nothing still loading. */
const settled = (page: Page) =>
  page.waitForFunction(() => {
    type Element = { readonly innerText: string; readonly querySelector: (selector: string) => Element | null }
    const main = (globalThis as unknown as { document: Element }).document.querySelector("main")
    return main !== null && main.querySelector("h1") !== null && !main.innerText.includes("Loading…")
  })

const program = Effect.gen(function*() {
  const wanted = process.argv.slice(2)
  const chosen = wanted.length === 0 ? shots : shots.filter((s) => wanted.includes(s.name))
  if (chosen.length === 0) throw new Error(`no such page; pages: ${shots.map((s) => s.name).join(", ")}`)

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-screenshots-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
  const server = yield* startServer({ HERALD_DATA_DIR: dataDir, LOG_LEVEL: "Warn" })
  const port = new URL(server.baseUrl).port
  const origin = `http://localhost:${port}`
  const sample = yield* seedSample(server.baseUrl, { HERALD_DATA_DIR: dataDir, PORT: port }, { plainAddresses: true }).pipe(
    Effect.tapCause(() => Effect.sync(() => console.error(`the server's log:\n${server.output()}`)))
  )
  const browser = yield* launchChromium
  fs.mkdirSync(out, { recursive: true })

  for (const { label, ...options } of viewports) {
    for (const shot of chosen) {
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* newContext(browser, { ...options, baseURL: origin, colorScheme: "light", reducedMotion: "reduce" })
        if (shot.signedOut !== true) {
          yield* Effect.promise(() =>
            context.addCookies([{ name: "herald_session", value: sample.person.session, url: origin, httpOnly: true, secure: true, sameSite: "Lax" }]))
        }
        const page = yield* Effect.promise(() => context.newPage())
        const file = path.join(out, `${shot.name}-${label}.png`)
        yield* Effect.promise(async () => {
          await page.goto(shot.path(sample))
          await settled(page)
          await shot.prepare?.(page)
          // Relative times ("2 minutes ago") and focus rings settle; the caret would blink into the picture.
          await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { blur?: () => void } | null } }).document.activeElement?.blur?.())
          await page.screenshot({ path: file, animations: "disabled", caret: "hide" })
        })
        console.log(`wrote ${path.relative(root, file)}`)
      }))
    }
  }
})

Effect.runPromise(Effect.scoped(program)).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
