/**
 * The browser of the console's tests: Debian's Chromium (npm's browser
 * downloads cannot work on these machines; `.ci/run` installs the package),
 * driven by `playwright-core`. No browser is a failure with the way to get
 * one, never a skipped test: a green run must mean the console was tried.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import type { Browser, BrowserContext, BrowserContextOptions } from "playwright-core"
import { chromium } from "playwright-core"

const candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium"]

/** Where Chromium is: `CHROMIUM_PATH`, else Debian's places; throws with the way to install it. */
export const findChromium = (): string => {
  const configured = process.env.CHROMIUM_PATH
  if (configured !== undefined && configured !== "") {
    if (fs.existsSync(configured)) return configured
    throw new Error(`Chromium not found at CHROMIUM_PATH=${configured}: apt-get install -y chromium, or set CHROMIUM_PATH`)
  }
  const found = candidates.find((path) => fs.existsSync(path))
  if (found === undefined) throw new Error("Chromium not found: apt-get install -y chromium, or set CHROMIUM_PATH")
  return found
}

/**
 * Flags for a closed network and a shared two-core machine: without the
 * background-networking ones Chromium's own connections (updates, sync,
 * QUIC probes) are refused and slow every page down.
 */
const args = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage"
]

/** A headless Chromium for the scope; closed with it. */
export const launchChromium = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath: findChromium(), headless: true, args, timeout: 60_000 })),
  (browser) => Effect.promise(() => browser.close().catch(() => undefined))
)

/** A fresh profile (cookies, storage, service workers, permissions) for the scope: one per test. */
export const newContext = (browser: Browser, options: BrowserContextOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => browser.newContext({ viewport: { width: 1280, height: 800 }, ...options })),
    (context: BrowserContext) => Effect.promise(() => context.close().catch(() => undefined))
  )
