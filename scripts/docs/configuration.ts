/**
 * Writes docs/configuration.md from the config declarations
 * (`npm run docs:config`); the reference test fails until it is rerun after a change.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { renderConfigurationReference } from "../../packages/server/src/config/Reference.ts"

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "configuration.md")
fs.mkdirSync(path.dirname(file), { recursive: true })
fs.writeFileSync(file, renderConfigurationReference())
console.log(`wrote ${path.relative(process.cwd(), file)}`)
