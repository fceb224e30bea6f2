/**
 * The e-mail channel's layers (docs/email.md). `EmailBase` is one value, so
 * the layer graph builds it once: the mail outbox the prompts, the pages and
 * the worker use is the same, and a wake reaches the worker.
 */
import { Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ChannelRepo } from "./ChannelRepo.ts"
import { EmailChannels } from "./EmailChannels.ts"
import { EmailLinks } from "./Links.ts"
import { MailOutbox } from "./MailOutbox.ts"
import { PageMail } from "./PageMail.ts"
import { PromptMail } from "./PromptMail.ts"

export const EmailBase = Layer.mergeAll(ChannelRepo.layer, MailOutbox.layer, EmailLinks.layer, AppConfig.layer)

/** With the prompts (needs their repo and the cluster): the fallback timer's work and the person's settings. */
export const PromptEmailLayer = EmailChannels.layerNoDeps.pipe(
  Layer.provideMerge(PromptMail.layerNoDeps),
  Layer.provideMerge(EmailBase)
)

/** With the pages: the mail to a paged person without an active device. */
export const PageEmailLayer = PageMail.layerNoDeps.pipe(Layer.provide(EmailBase))
