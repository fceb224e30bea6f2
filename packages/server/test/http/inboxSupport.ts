/** Helpers of the inbox tests: items seeded as notifications and events write them, raw calls, tampered tokens. */
import { Effect } from "effect"
import { rawFetch } from "../../../../test/support/server.ts"
import { InboxWrites } from "../../src/inbox/InboxWrites.ts"
import type { NewInboxItem } from "../../src/inbox/InboxWrites.ts"
import { makeId } from "../../src/lib/Ids.ts"

export type Seed = Partial<Omit<NewInboxItem, "userId">>

/** Inserts one item at a time (so `seq` follows the order given); answers their inbox ids. */
export const seed = (userId: string, items: ReadonlyArray<Seed>) =>
  Effect.gen(function*() {
    const writes = yield* InboxWrites
    const ids: Array<string> = []
    for (const [i, item] of items.entries()) {
      const origin = item.origin ?? "notification"
      const itemId = item.itemId ?? (yield* makeId(origin === "event" ? "evt" : "anot"))
      yield* writes.insert([{ userId, origin, itemId, sourceName: "ci", title: `item ${i}`, body: `body ${i}`, ...item }])
      ids.push(`${origin}:${itemId}`)
    }
    return ids
  })

/** A decoded record as plain fields, to compare with an object literal. */
export const plain = <A extends object>(a: A) => ({ ...a })

export const many = (n: number, item: Seed = {}) => Array.from({ length: n }, () => item)

export const get = (secret: string, path: string) => rawFetch(`/api/agent${path}`, { headers: { authorization: `Bearer ${secret}` } })
export const post = (secret: string, path: string, body?: unknown) =>
  rawFetch(`/api/agent${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

/** Flips one character of a token's signature or content. */
export const tamper = (token: string, at: number) => {
  const c = token[at] === "A" ? "B" : "A"
  return token.slice(0, at) + c + token.slice(at + 1)
}
