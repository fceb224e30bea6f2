import { configDefaults, defineConfig } from "vitest/config"
import { ProcessesFirst } from "./test/support/sequencer.ts"

const include = ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"]
/** Files that need the module state of a fresh process (process-wide metrics that start at 0). */
const freshProcess = ["packages/server/test/observability/metricsAtZero.test.ts"]
/** The console in Chromium (test/browser): a real server and browser per file, each step a browser's pace. */
const browser = ["test/browser/**/*.test.ts"]
const common = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: "forks",
  // On the embedded database, three on two cores: the end-to-end and browser files spend much of their time
  // waiting on the processes they start (a server's start, a CLI's exit, Chromium), and a third worker fills
  // those waits (328 → 293 s). On PostgreSQL its server's backends take those cores too, and a third worker
  // only queues (.ci/run's tests 439 → 499 s): two.
  maxWorkers: process.env.TEST_DATABASE_URL === undefined ? 3 : 2
} as const

export default defineConfig({
  test: {
    // One migrated database per run, copied by every test file (test/support/database.ts).
    globalSetup: ["test/support/globalSetup.ts"],
    // On a fresh clone, the files that start processes first (test/support/sequencer.ts).
    sequence: { sequencer: ProcessesFirst },
    ...common,
    reporters: ["default"],
    projects: [
      // A worker keeps its module graph from file to file: importing the service anew for each of
      // ~130 files cost about a third of the run's CPU. Each file still builds its own database and layers.
      { test: { ...common, name: "shared-modules", include, exclude: [...configDefaults.exclude, ...freshProcess, ...browser], isolate: false } },
      { test: { ...common, name: "isolated", include: freshProcess } },
      // On a loaded two-core machine a page's every step waits for the CPU: more time per test, same bounds per step.
      { test: { ...common, name: "browser", include: browser, isolate: false, testTimeout: 120_000 } }
    ]
  }
})
