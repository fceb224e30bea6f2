/**
 * Prompts (interactions/): the service, its entity on the platform's cluster,
 * the transitions, reminders of pending prompts and the wake-ups, over their
 * SQL. Built over the capabilities a prompt's steps call and passed on with
 * them (live activities, reply webhooks, the e-mail fallback): they appear in
 * the graph here only, so the e-mail recipients' cache the e-mail settings
 * invalidate is the one the prompts read.
 */
import { Layer } from "effect"
import { ActivitiesLayer } from "../activities/layer.ts"
import { AppAccess } from "../apps/AppAccess.ts"
import { EmailLayer } from "../email/layer.ts"
import { WebhooksLayer } from "../webhooks/layer.ts"
import { Interactions } from "./Interactions.ts"
import { PromptLive } from "./PromptBehaviour.ts"
import { Reminders } from "./Reminders.ts"
import { InteractionsRepo } from "./InteractionsRepo.ts"
import { Transitions } from "./Transitions.ts"
import { PromptWakeups } from "./Wakeups.ts"

export const PromptsLayer = Interactions.layerNoDeps.pipe(
  Layer.provideMerge(PromptLive),
  Layer.provideMerge(Transitions.layer),
  // Reminders of pending prompts: what the entity's Remind timer runs and where a new prompt's default comes from.
  Layer.provideMerge(Reminders.layer),
  Layer.provideMerge(PromptWakeups.layer),
  Layer.provideMerge(Layer.mergeAll(InteractionsRepo.layer, AppAccess.layer)),
  Layer.provideMerge(Layer.mergeAll(ActivitiesLayer, WebhooksLayer, EmailLayer))
)
