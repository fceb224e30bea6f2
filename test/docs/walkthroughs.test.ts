/**
 * The README stays a quick start and a map (≤ 20 KB), and no walkthrough writes a file into the
 * checkout: each one in docs/walkthroughs/ moves to a temporary directory it names before its first
 * command that writes one, and the README's own walkthrough writes none (`git add .` would take a
 * secret-bearing `service.json` left in the repository's root).
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const walkthroughs = path.join(root, "docs/walkthroughs")

/** The shell blocks of a Markdown file, in order. */
const shellBlocks = (markdown: string) => [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].map((m) => m[1]!)

/** Lines that write a file named relative to the working directory: `> name`, `>> name`, `cat > name`, `tee name`. */
const writesRelative = (line: string) => {
  const code = line.replace(/#.*$/, "")
  return /(^|[^0-9&>])>{1,2}\s*(?![/$&~]|\(|\/dev\/)[\w.-]+/.test(code) || /\btee\s+(?!-)(?![/$~])[\w.-]+/.test(code)
}

describe("walkthroughs", () => {
  it("the README is at most 20 KB", () => {
    assert.isAtMost(fs.statSync(path.join(root, "README.md")).size, 20 * 1024)
  })

  it("the README's walkthrough writes no file", () => {
    const writing = shellBlocks(fs.readFileSync(path.join(root, "README.md"), "utf8")).flatMap((b) => b.split("\n")).filter(writesRelative)
    assert.deepStrictEqual(writing, [])
  })

  it("each walkthrough in docs/walkthroughs moves to a temporary directory before it writes a file", () => {
    const files = fs.readdirSync(walkthroughs).filter((name) => name.endsWith(".md"))
    assert.isAtLeast(files.length, 10)
    for (const name of files) {
      const lines = shellBlocks(fs.readFileSync(path.join(walkthroughs, name), "utf8")).flatMap((b) => b.split("\n"))
      const moved = lines.findIndex((line) => /^cd "\$\(mktemp -d -t herald-walk-XXXX\)"/.test(line))
      assert.isAtLeast(moved, 0, `${name}: no cd "$(mktemp -d -t herald-walk-XXXX)"`)
      const firstWrite = lines.findIndex(writesRelative)
      assert.isTrue(firstWrite === -1 || firstWrite > moved, `${name}: writes before moving: ${lines[firstWrite]}`)
    }
  })

  it("the test sees a write when there is one", () => {
    for (const line of [`curl -s $HERALD > service.json`, `cat > receiver.mjs <<'EOF'`, `echo x | tee out.txt`, `jq . >> log.json`]) {
      assert.isTrue(writesRelative(line), line)
    }
    for (const line of [`curl -s -o /dev/null $URL`, `node x.mjs 2>&1`, `echo $A > "$TMP/x"`, `cmd >/dev/null`, `# > not.json`, `[ "$a" -gt 0 ]`]) {
      assert.isFalse(writesRelative(line), line)
    }
  })
})
