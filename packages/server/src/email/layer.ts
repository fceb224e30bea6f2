/**
 * The e-mail channel (docs/email.md): the person's settings, the prompt
 * fallback's mail and the page mail, over their SQL and the signed links. The
 * mail outbox they queue to is the platform's (one per process, so a wake
 * reaches the worker).
 */
import { Layer } from "effect"
import { InteractionsRepo } from "../interactions/InteractionsRepo.ts"
import { ChannelRepo } from "./ChannelRepo.ts"
import { EmailChannels } from "./EmailChannels.ts"
import { EmailLinks } from "./Links.ts"
import { PageMail } from "./PageMail.ts"
import { PromptMail } from "./PromptMail.ts"

export const EmailLayer = Layer.mergeAll(EmailChannels.layerNoDeps, PageMail.layerNoDeps).pipe(
  Layer.provideMerge(PromptMail.layerNoDeps),
  Layer.provideMerge(Layer.mergeAll(ChannelRepo.layer, EmailLinks.layerNoDeps)),
  // The prompt fallback reads the prompt it mails (a repo: no state of the prompts capability).
  Layer.provide(InteractionsRepo.layer)
)
