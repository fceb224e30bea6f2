#!/usr/bin/env node
// `npx herald …`: runs the TypeScript entry point on Node 24 (native type stripping).
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const entry = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const major = Number(process.versions.node.split(".")[0])
if (major >= 24) {
  await import(entry)
} else {
  // An older `node` on PATH: use the Node 24 the project pins in node_modules.
  const node = fileURLToPath(new URL("../../../node_modules/.bin/node", import.meta.url))
  const result = spawnSync(node, [entry, ...process.argv.slice(2)], { stdio: "inherit" })
  process.exit(result.status ?? 1)
}
