/** Inbox tokens: only this key's untouched tokens open, for the account, filter and kind they were made for. */
import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { randomBytes } from "node:crypto"
import { filterKey, makeInboxTokens } from "../../src/inbox/Cursor.ts"

const key = randomBytes(32).toString("hex")
const tokens = makeInboxTokens(key)
const all = filterKey({ project: undefined, unread: false })

describe("inbox tokens", () => {
  it("a cursor opens to its seq for the same account and filter only", () => {
    const cursor = tokens.cursor("usr_a", all, "12345")
    assert.deepStrictEqual(tokens.openCursor(cursor, "usr_a", all), Option.some("12345"))
    assert.isTrue(Option.isNone(tokens.openCursor(cursor, "usr_b", all)))
    assert.isTrue(Option.isNone(tokens.openCursor(cursor, "usr_a", filterKey({ project: undefined, unread: true }))))
    assert.isTrue(Option.isNone(tokens.openCursor(cursor, "usr_a", filterKey({ project: "unfiled", unread: false }))))
  })

  it("filters differ when any part differs", () => {
    const keys = new Set([
      filterKey({ project: undefined, unread: false }),
      filterKey({ project: undefined, unread: true }),
      filterKey({ project: "unfiled", unread: false }),
      filterKey({ project: "*", unread: false }),
      filterKey({ project: "a", unread: true })
    ])
    assert.strictEqual(keys.size, 5)
  })

  it("a read-through token opens to its seq for its account; the kinds do not mix", () => {
    const token = tokens.readThrough("usr_a", "77")
    assert.deepStrictEqual(tokens.openReadThrough(token, "usr_a"), Option.some("77"))
    assert.isTrue(Option.isNone(tokens.openReadThrough(token, "usr_b")))
    assert.isTrue(Option.isNone(tokens.openCursor(token, "usr_a", all)))
    assert.isTrue(Option.isNone(tokens.openReadThrough(tokens.cursor("usr_a", all, "77"), "usr_a")))
  })

  it("any altered character, another key or a forged body is refused", () => {
    const cursor = tokens.cursor("usr_a", all, "500")
    for (let i = 0; i < cursor.length; i++) {
      if (cursor[i] === ".") continue
      const altered = cursor.slice(0, i) + (cursor[i] === "A" ? "B" : "A") + cursor.slice(i + 1)
      assert.isTrue(Option.isNone(tokens.openCursor(altered, "usr_a", all)), altered)
    }
    assert.isTrue(Option.isNone(makeInboxTokens(randomBytes(32).toString("hex")).openCursor(cursor, "usr_a", all)))
    const [, sig] = cursor.split(".")
    const forged = Buffer.from(JSON.stringify({ k: "c", u: "usr_a", f: all, s: "999999" })).toString("base64url")
    assert.isTrue(Option.isNone(tokens.openCursor(`${forged}.${sig}`, "usr_a", all)))
    for (const garbage of ["", ".", "a.b.c", "abc", "e30.", "!!.??"]) {
      assert.isTrue(Option.isNone(tokens.openCursor(garbage, "usr_a", all)), garbage)
    }
  })

  it("a signed body of the wrong shape is refused", () => {
    // Signed with the right key but not a cursor's content: refused by the content check, not only the signature.
    const odd = makeInboxTokens(key)
    const notSeq = odd.cursor("usr_a", all, "12; DROP")
    assert.isTrue(Option.isNone(tokens.openCursor(notSeq, "usr_a", all)))
  })
})
