#!/usr/bin/env node
/**
 * The `herald` executable's entry point (the CLI itself is cli.ts). It turns on
 * Node's module compile cache first: every later start reuses the compiled code
 * and the type-stripped TypeScript of each module instead of redoing both, about
 * a third of a start's module loading. The cache lives in the OS temp directory
 * (`node-compile-cache`; `NODE_COMPILE_CACHE` moves it, `NODE_DISABLE_COMPILE_CACHE=1`
 * turns it off), never in the repository. Modules load only after it is on, so
 * this file imports nothing else statically. Then it runs the CLI from the
 * bundle `npm install` built, while that is current, else from the sources (bundle.ts).
 */
import { enableCompileCache } from "node:module"

enableCompileCache()
const { cliModule } = await import("./bundle.ts")
const { runCli }: typeof import("./cli.ts") = await import(cliModule())
runCli()
