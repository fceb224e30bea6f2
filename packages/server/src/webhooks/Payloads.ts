/**
 * The body of a reply event in each preset (decisions.md): `generic` for
 * programs, `chat` for chat tools (one human-readable line), `assistant` for
 * agents (a sentence an agent can act on). The body is fixed when the event
 * is created, so every retry sends exactly the same bytes.
 */
import type { Interaction, ReplyEventType, ReplyWebhookPreset } from "@herald/api"

/** The record as the API shows it (every field is already its JSON form). */
const encodeInteraction = (interaction: Interaction) => ({ ...interaction })

const quoted = (text: string) => `“${text}”`

/** Line breaks in a title or a free reply would break the one line a chat shows: spaces instead. */
const oneLine = (text: string) => text.replace(/\s*[\r\n\u2028\u2029]+\s*/g, " ")

/** What happened, as one line a person reads in a chat. */
const chatLine = (type: ReplyEventType, i: Interaction): string => oneLine(chatText(type, i))

const chatText = (type: ReplyEventType, i: Interaction): string => {
  switch (type) {
    case "interaction.answered":
      if (i.timedOut) {
        return `${quoted(i.title)} timed out unanswered; default answer: ${i.kind === "reply" ? i.response ?? "" : `${i.status}.`}`
      }
      return i.kind === "reply"
        ? `${quoted(i.title)} was answered: ${i.response ?? ""}`
        : `${quoted(i.title)} was answered: ${i.status}.`
    case "interaction.expired":
      return `${quoted(i.title)} expired without an answer.`
    case "interaction.canceled":
      return `${quoted(i.title)} was canceled.`
  }
}

/** What happened, as a sentence an agent can act on. */
const agentSentence = (type: ReplyEventType, i: Interaction): string => {
  switch (type) {
    case "interaction.answered":
      // A default answer given at expiry: nobody decided, and the sentence says so.
      if (i.timedOut) {
        return `Nobody answered "${i.title}" before it expired; it resolved with its default answer: ` +
          `${i.kind === "reply" ? i.response ?? "" : i.status} (timed out).`
      }
      switch (i.status) {
        case "approved":
          return `The person approved "${i.title}". You may proceed.`
        case "denied":
          return `The person denied "${i.title}". Do not proceed.`
        case "yes":
          return `The person answered yes to "${i.title}".`
        case "no":
          return `The person answered no to "${i.title}".`
        default:
          return `The person replied to "${i.title}": ${i.response ?? ""}`
      }
    case "interaction.expired":
      return `Nobody answered "${i.title}" before it expired. Treat it as not approved.`
    case "interaction.canceled":
      return `The prompt "${i.title}" was canceled; no answer will come.`
  }
}

export const eventPayload = (
  preset: ReplyWebhookPreset,
  type: ReplyEventType,
  interaction: Interaction,
  timestamp: string
): string => {
  switch (preset) {
    case "generic":
      return JSON.stringify({ type, timestamp, data: { interaction: encodeInteraction(interaction) } })
    case "chat":
      return JSON.stringify({ text: chatLine(type, interaction), type, data: { interaction: encodeInteraction(interaction) } })
    case "assistant":
      return JSON.stringify({
        type,
        interactionId: interaction.id,
        status: interaction.status,
        response: interaction.response,
        timedOut: interaction.timedOut,
        message: agentSentence(type, interaction)
      })
  }
}

/** The event type of a status a prompt left `pending` for. */
export const eventTypeOf = (status: Interaction["status"]): ReplyEventType =>
  status === "expired" ? "interaction.expired" : status === "canceled" ? "interaction.canceled" : "interaction.answered"
