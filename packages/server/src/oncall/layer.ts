/**
 * On-call (oncall/): pages and their entity on the platform's cluster (one
 * actor per page, durable escalation timers), the steps the entity runs and
 * the groups, over their SQL. A paged person without an active device is
 * mailed: the page mail (email/PageMail.ts, stateless) over the person's
 * channel settings and the signed links, queued to the platform's mail outbox.
 */
import { Layer } from "effect"
import { AppAccess } from "../apps/AppAccess.ts"
import { OncallConfig } from "../config/OncallConfig.ts"
import { ChannelRepo } from "../email/ChannelRepo.ts"
import { EmailLinks } from "../email/Links.ts"
import { PageMail } from "../email/PageMail.ts"
import { Groups } from "./Groups.ts"
import { GroupsRepo } from "./GroupsRepo.ts"
import { PageLive } from "./PageBehaviour.ts"
import { Pages } from "./Pages.ts"
import { PagesRepo } from "./PagesRepo.ts"
import { PageSteps } from "./PageSteps.ts"

const PageMailLayer = PageMail.layerNoDeps.pipe(Layer.provide([ChannelRepo.layer, EmailLinks.layerNoDeps]))

export const OncallLayer = Layer.mergeAll(Pages.layerNoDeps, PageLive, Groups.layerNoDeps).pipe(
  Layer.provideMerge(PageSteps.layer),
  Layer.provideMerge(Layer.mergeAll(PagesRepo.layer, GroupsRepo.layer)),
  Layer.provide(Layer.mergeAll(PageMailLayer, AppAccess.layer, OncallConfig.layer))
)
