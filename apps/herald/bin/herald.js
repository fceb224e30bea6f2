#!/usr/bin/env node
// `npx herald …`: runs the TypeScript entry point on Node 24 (native type stripping).
//
// On an older `node` it runs the Node 24 the project pins in node_modules as a child, and stands in
// for it: SIGINT, SIGTERM and SIGHUP are passed on (a killed `herald hook` must let its child cancel
// the prompt, docs/cli.md), and it ends as the child ended (its exit code, or the same signal).
// It says so in one line on stderr, every time: scripts parse stdout only, and a person who sees an
// unexpected Node version in a bug report should know why. The child's ExperimentalWarning lines
// (the SQLite and type-stripping notices) are turned off; other warnings still print.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const entry = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const major = Number(process.versions.node.split(".")[0])
if (major >= 24) {
  await import(entry)
} else {
  const node = fileURLToPath(new URL("../../../node_modules/.bin/node", import.meta.url))
  process.stderr.write(`herald: node ${process.versions.node} is older than 24; running with the project's Node 24 (node_modules/.bin/node)\n`)
  const child = spawn(node, ["--disable-warning=ExperimentalWarning", entry, ...process.argv.slice(2)], { stdio: "inherit" })
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"]
  // Handled here, so this process outlives the signal until the child has ended.
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
  }
  for (const signal of signals) process.on(signal, forward)
  child.once("error", (error) => {
    process.stderr.write(`herald: cannot run ${node}: ${error.message} (run npm install)\n`)
    process.exit(1)
  })
  child.once("exit", (code, signal) => {
    if (signal !== null) {
      // Ended by a signal: end the same way, so the shell sees 128 + its number.
      for (const s of signals) process.removeAllListeners(s)
      process.kill(process.pid, signal)
      return
    }
    process.exit(code ?? 1)
  })
}
