/**
 * A prompt's alert: the push that shows the question with its answer buttons.
 * Built the same way when the prompt is created and for each reminder, so a
 * reminder carries the same collapse id and replaces the alert on the device
 * rather than adding one.
 */
import type { Interaction } from "@herald/api"
import { previewOf } from "../inbox/InboxWrites.ts"
import { alertMessage } from "../push/Alerts.ts"

/** The notification category the phone app registers for each kind's buttons. */
const categoryOf = (kind: Interaction["kind"]) =>
  kind === "approval" ? "HERALD_APPROVAL" : kind === "yes_no" ? "HERALD_YES_NO" : "HERALD_REPLY"

export interface PromptAlertContent {
  readonly id: string
  readonly kind: Interaction["kind"]
  readonly title: string
  readonly prompt: string
  readonly url: string | null
  readonly imageUrl: string | null
  readonly projectId: string | null
  readonly actionDigest: string
}

/** The alert of a prompt; `reminder` (1, 2…) marks a reminder's push for the app (and the sandbox's record). */
export const promptAlert = (p: PromptAlertContent, reminder?: number) =>
  alertMessage({
    ref: `interaction:${p.id}`,
    collapseId: p.id,
    title: p.title,
    body: previewOf(p.prompt, "text"),
    url: p.url,
    imageUrl: p.imageUrl,
    threadId: p.projectId,
    category: categoryOf(p.kind),
    data: {
      interactionId: p.id,
      kind: p.kind,
      actionDigest: p.actionDigest,
      ...(reminder !== undefined ? { reminder: String(reminder) } : {})
    }
  })
