import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One migrated database per run, copied by every test file (test/support/database.ts).
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    // Two cores: more workers than that only queue on the CPU.
    maxWorkers: 2,
    reporters: ["default"]
  }
})
