/**
 * The push messages of live activities: APNs `liveactivity` pushes (`event`
 * start/update/end with `content-state`) and, for Android, FCM data messages
 * carrying the same state for the app to draw its own card.
 */
import { ActivityPayloadTooLarge } from "@herald/api"
import type { Interaction } from "@herald/api"
import { Effect } from "effect"
import { PAYLOAD_LIMIT, payloadBytes } from "../push/PushMessage.ts"
import type { PushMessage } from "../push/PushMessage.ts"

/**
 * Refuses a message a provider would refuse for its size (APNs or FCM, as each counts it), `what` naming it in the
 * error ("start", "update"). `end` is the end the same props would make: it is
 * judged too (it can be the larger), so an activity accepted can always end.
 */
export const checkPayloadSize = (message: PushMessage, what: string, end?: PushMessage): Effect.Effect<void, ActivityPayloadTooLarge> => {
  const bytes = Math.max(payloadBytes(message), end === undefined ? 0 : payloadBytes(end))
  return bytes <= PAYLOAD_LIMIT ? Effect.void : Effect.fail(new ActivityPayloadTooLarge({
    error: `The ${what}'s push payload${end === undefined ? "" : " (or the end built from it)"} would be ${bytes} bytes; ` +
      `the providers take at most ${PAYLOAD_LIMIT}.`,
    limit: PAYLOAD_LIMIT
  }))
}

/** The ActivityKit attributes type the iOS app declares. */
const ATTRIBUTES_TYPE = "HeraldActivityAttributes"

export type CardEvent = "start" | "update" | "end"

export const liveActivityMessage = (options: {
  readonly activityId: string
  readonly event: CardEvent
  readonly state: Readonly<Record<string, unknown>>
  readonly priority: 5 | 10
  readonly timestampSeconds: number
  /** The card's title in the start alert. */
  readonly alert?: { readonly title: string; readonly body: string }
  /** When an ended card leaves the lock screen (unix seconds). */
  readonly dismissalDate?: number
  readonly staleDate?: number
}): PushMessage => ({
  pushType: "liveactivity",
  priority: options.priority,
  topicSuffix: ".push-type.liveactivity",
  apns: {
    aps: {
      timestamp: options.timestampSeconds,
      event: options.event,
      "content-state": options.state,
      ...(options.event === "start"
        ? { "attributes-type": ATTRIBUTES_TYPE, attributes: { activityId: options.activityId } }
        : {}),
      ...(options.alert !== undefined ? { alert: options.alert } : {}),
      ...(options.staleDate !== undefined ? { "stale-date": options.staleDate } : {}),
      ...(options.dismissalDate !== undefined ? { "dismissal-date": options.dismissalDate } : {})
    }
  },
  fcm: {
    data: {
      type: "live_activity",
      activityId: options.activityId,
      event: options.event,
      state: JSON.stringify(options.state),
      timestamp: String(options.timestampSeconds)
    },
    android: { priority: options.priority === 10 ? "high" : "normal", collapseKey: options.activityId }
  }
})

/** How long an ended activity's final state stays on the lock screen. */
const END_DISMISSAL_SECONDS = 300

/** The end of an agent's activity, carrying its last state. */
export const endMessage = (activityId: string, state: Readonly<Record<string, unknown>>, nowSeconds: number): PushMessage =>
  liveActivityMessage({
    activityId,
    event: "end",
    state,
    priority: 10,
    timestampSeconds: nowSeconds,
    dismissalDate: nowSeconds + END_DISMISSAL_SECONDS
  })

type CardInteraction = Pick<
  Interaction,
  "id" | "kind" | "title" | "prompt" | "actionDigest" | "primaryLabel" | "secondaryLabel" | "status" | "expiresAt"
>

const cardState = (interaction: CardInteraction, detail: string) => ({
  title: interaction.title,
  detail,
  status: interaction.status,
  layout: "standard",
  interactionId: interaction.id,
  kind: interaction.kind,
  actionDigest: interaction.actionDigest,
  primaryLabel: interaction.primaryLabel ?? (interaction.kind === "approval" ? "Approve" : interaction.kind === "yes_no" ? "Yes" : "Reply"),
  secondaryLabel: interaction.secondaryLabel ?? (interaction.kind === "approval" ? "Deny" : interaction.kind === "yes_no" ? "No" : null)
})

/** A prompt card's start: the card, and an alert with the same text. */
export const promptCardStart = (
  activityId: string,
  interaction: CardInteraction,
  state: ReturnType<typeof cardState>,
  timestampSeconds: number
): PushMessage =>
  liveActivityMessage({
    activityId,
    event: "start",
    state,
    priority: 10,
    timestampSeconds,
    alert: { title: interaction.title, body: state.detail },
    staleDate: Math.floor(Date.parse(interaction.expiresAt) / 1000)
  })

// Measured as wide as they get, so the start and the end of a card cut its text at the same place:
// timestamps of ten digits, and the longest status a card shows ("approved", "canceled").
const WIDEST_SECONDS = 9_999_999_999
const WIDEST_STATUS = "canceled"

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" })

/**
 * The props of a prompt's interactive card: what the lock screen shows and the
 * buttons' meaning. A prompt may be longer than a push can carry (4,000
 * characters, each escaped or several bytes): its `detail` then ends with "…"
 * where the start, the card's largest push, would pass 4 KB, cut between
 * characters as a person sees them. The person reads the whole prompt in the
 * app; the action digest covers the whole prompt.
 */
export const promptCardState = (activityId: string, interaction: CardInteraction) => {
  const widest = { ...interaction, status: WIDEST_STATUS } as const
  const fits = (detail: string) =>
    payloadBytes(promptCardStart(activityId, widest, cardState(widest, detail), WIDEST_SECONDS)) <= PAYLOAD_LIMIT
  if (fits(interaction.prompt)) return cardState(interaction, interaction.prompt)
  // The most characters that fit, by bisection (the title alone, at most 200 characters, always fits).
  const chars = Array.from(graphemes.segment(interaction.prompt), (s) => s.segment)
  let kept = 0
  let over = chars.length
  while (over - kept > 1) {
    const mid = Math.floor((kept + over) / 2)
    if (fits(`${chars.slice(0, mid).join("")}…`)) kept = mid
    else over = mid
  }
  return cardState(interaction, `${chars.slice(0, kept).join("")}…`)
}
