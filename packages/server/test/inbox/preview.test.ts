/** previewOf: plain text, markdown syntax stripped, whitespace collapsed, at most 200 characters. */
import { assert, describe, it } from "@effect/vitest"
import { PREVIEW_MAX, previewOf } from "../../src/inbox/InboxWrites.ts"

describe("previewOf", () => {
  it("plain text keeps its characters and collapses whitespace", () => {
    assert.strictEqual(previewOf("  Build   **42**\n\n  passed\t# ok  ", "text"), "Build **42** passed # ok")
  })

  it("strips headings, emphasis, strike-through and rules", () => {
    assert.strictEqual(
      previewOf("# Title\n\n## Sub ##\n\n**bold** and __strong__, *em* and _em_, ~~gone~~\n\n---\n\nend", "markdown"),
      "Title Sub bold and strong, em and em, gone end"
    )
    assert.strictEqual(previewOf("Setext\n======\n\nnext", "markdown"), "Setext next")
  })

  it("keeps link and image text, drops their addresses; autolinks keep the address", () => {
    assert.strictEqual(
      previewOf("See [the docs](https://x.example/d \"Docs\") and ![a chart](https://x.example/c.png) or [ref][1].\n\n[1]: https://x.example/r", "markdown"),
      "See the docs and a chart or ref."
    )
    assert.strictEqual(previewOf("Mail <mailto:a@b.example> or <https://x.example>", "markdown"), "Mail mailto:a@b.example or https://x.example")
  })

  it("keeps code but drops fences and backticks", () => {
    assert.strictEqual(previewOf("Run `npm test` now:\n\n```bash\nnpm ci\nnpm test\n```\n\nDone", "markdown"), "Run npm test now: npm ci npm test Done")
    assert.strictEqual(previewOf("``a `tick` b``", "markdown"), "a `tick` b")
  })

  it("strips list markers, task boxes and blockquotes", () => {
    assert.strictEqual(
      previewOf("> quoted\n> > deeper\n\n- one\n* two\n+ three\n1. four\n2) five\n- [x] done\n- [ ] todo", "markdown"),
      "quoted deeper one two three four five done todo"
    )
  })

  it("strips HTML tags and comments, keeps their text", () => {
    assert.strictEqual(previewOf("<p>Hello <b>there</b><br/>friend</p><!-- hidden -->", "markdown"), "Hello therefriend")
    assert.strictEqual(previewOf("a < b and c > d", "markdown"), "a < b and c > d")
  })

  it("leaves snake_case, escaped characters and lone stars alone", () => {
    assert.strictEqual(previewOf("use snake_case_name and 2 * 3 * 4", "markdown"), "use snake_case_name and 2 * 3 * 4")
    assert.strictEqual(previewOf("\\*not em\\* and \\# not heading", "markdown"), "*not em* and # not heading")
  })

  it("cuts at 200 characters with an ellipsis, never inside a character", () => {
    const long = "word ".repeat(100)
    const preview = previewOf(long, "text")
    assert.strictEqual(Array.from(preview).length, PREVIEW_MAX)
    assert.isTrue(preview.endsWith("…"))
    assert.isTrue(long.startsWith(preview.slice(0, -1)))
    const exact = "x".repeat(PREVIEW_MAX)
    assert.strictEqual(previewOf(exact, "text"), exact)
    const emoji = "😀".repeat(PREVIEW_MAX + 5)
    const cut = previewOf(emoji, "markdown")
    assert.strictEqual(Array.from(cut).length, PREVIEW_MAX)
    assert.strictEqual(cut, `${"😀".repeat(PREVIEW_MAX - 1)}…`)
  })

  it("the limit applies after stripping", () => {
    const body = `[${"a".repeat(150)}](https://x.example/${"p".repeat(300)})`
    assert.strictEqual(previewOf(body, "markdown"), "a".repeat(150))
  })
})

describe("previewOf on long markdown", () => {
  it("strips only the head of the body (its first 1,000 characters)", () => {
    // Markup past the head is never looked at: the preview is long cut by then.
    assert.strictEqual(previewOf(`${"a ".repeat(600)}**bold**`, "markdown"), `${"a ".repeat(99)}a…`)
    assert.strictEqual(previewOf("[".repeat(10_000), "markdown"), `${"[".repeat(199)}…`)
  })

  it("keeps escaped characters past the 256th", () => {
    assert.strictEqual(previewOf("\\*".repeat(300), "markdown"), `${"*".repeat(199)}…`)
  })
})
