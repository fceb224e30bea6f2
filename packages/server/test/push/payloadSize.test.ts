/**
 * What every push is measured by before it goes (APNs' JSON, FCM's JSON of its
 * notification and data, the larger binding), and the two cuts that keep a
 * push within 4 KB: an alert's body and a prompt card's text, both between
 * characters as a person sees them, a card's the same whatever its status.
 */
import { assert, describe, it } from "@effect/vitest"
import { liveActivityMessage, promptCardStart, promptCardState } from "../../src/activities/Cards.ts"
import { alertMessage } from "../../src/push/Alerts.ts"
import { apnsBytes, fcmBytes, PAYLOAD_LIMIT, payloadBytes } from "../../src/push/PushMessage.ts"

// One grapheme of 25 bytes: four emoji joined by three zero-width joiners.
const family = "👨‍👩‍👧‍👦"
const wholeFamilies = (text: string) => text.length % family.length === 0 && text === family.repeat(text.length / family.length)

describe("push sizes", () => {
  it("FCM is counted as the JSON of its notification and data, escapes included", () => {
    const message = liveActivityMessage({
      activityId: "act_1",
      event: "update",
      state: { title: '"quoted"' },
      priority: 5,
      timestampSeconds: 1_700_000_000
    })
    const data = message.fcm.data!
    assert.strictEqual(fcmBytes(message), Buffer.byteLength(JSON.stringify({ data })))
    // The state travels as a JSON string inside JSON: each quote of the title counts three bytes.
    assert.isAbove(fcmBytes(message), Object.entries(data).reduce((n, [k, v]) => n + k.length + v.length, 0))
    assert.strictEqual(payloadBytes(message), Math.max(apnsBytes(message), fcmBytes(message)))
  })

  it("an alert too long for a push loses the end of its body between graphemes, within 4 KB", () => {
    const message = alertMessage({
      ref: "notification:anot_1",
      collapseId: "anot_1",
      title: "Family photos",
      body: family.repeat(400),
      url: null,
      imageUrl: null,
      threadId: null
    })
    assert.isAtMost(payloadBytes(message), PAYLOAD_LIMIT)
    const body = (message.apns.aps as { alert: { body: string } }).alert.body
    assert.isTrue(body.endsWith("…"))
    assert.isTrue(wholeFamilies(body.slice(0, -1)), "cut between graphemes")
    assert.isAbove(body.length, 100)
  })

  it("a prompt card's text is cut once: the same at every status, between graphemes, its start within 4 KB", () => {
    const interaction = {
      id: "int_1",
      kind: "approval" as const,
      title: `Deploy "${"✓".repeat(150)}"`,
      prompt: `Ship "v2"? ${family.repeat(300)}`,
      actionDigest: "0".repeat(64),
      primaryLabel: null,
      secondaryLabel: null,
      status: "pending" as const,
      expiresAt: "2026-11-23T12:00:00Z"
    }
    const statuses = ["pending", "approved", "denied", "yes", "no", "replied", "canceled", "expired"] as const
    const details = statuses.map((status) => promptCardState("act_01jbench0000000000000000", { ...interaction, status }).detail)
    assert.strictEqual(new Set(details).size, 1)
    const detail = details[0]!
    assert.isTrue(detail.endsWith("…"))
    assert.isTrue(detail.startsWith('Ship "v2"? '))
    assert.isTrue(wholeFamilies(detail.slice('Ship "v2"? '.length, -1)), "cut between graphemes")
    const state = promptCardState("act_01jbench0000000000000000", interaction)
    assert.isAtMost(payloadBytes(promptCardStart("act_01jbench0000000000000000", interaction, state, 9_999_999_999)), PAYLOAD_LIMIT)
  })
})
