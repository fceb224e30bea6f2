/**
 * Pages by e-mail: a person a page step reaches who has no active device is
 * mailed the page with an acknowledge link, when their channel is on, verified
 * and takes pages. Called inside the step's transaction, for the people the
 * step marked notified for the first time (oncall/PageSteps.ts), so a step run
 * twice mails nobody twice; the mail's key (`page:<id>:<user>`) holds that too.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ChannelRepo } from "./ChannelRepo.ts"
import { EmailLinks } from "./Links.ts"
import { MailOutbox } from "./MailOutbox.ts"
import { pageMail } from "./MailText.ts"

/** How long a page's acknowledge link works (the page's own state ends it sooner). */
export const PAGE_LINK_HOURS = 24

export interface MailedPage {
  readonly id: string
  readonly title: string
  readonly body: string | null
}

export class PageMail extends Context.Service<PageMail, {
  /** Queues the page's mail to each of `userIds` whose channel takes pages (in the caller's transaction). */
  readonly queue: (page: MailedPage, groupName: string, userIds: ReadonlyArray<string>) => Effect.Effect<void>
}>()("herald/PageMail") {
  static readonly layerNoDeps = Layer.effect(PageMail, Effect.gen(function*() {
    const channels = yield* ChannelRepo
    const outbox = yield* MailOutbox
    const links = yield* EmailLinks
    const { publicUrl } = yield* AppConfig

    const queue = Effect.fn("PageMail.queue")(function*(page: MailedPage, groupName: string, userIds: ReadonlyArray<string>) {
      if (userIds.length === 0) return
      const recipients = (yield* channels.recipients(userIds)).filter((r) => r.pages)
      if (recipients.length === 0) return
      const expiresAt = (yield* Clock.currentTimeMillis) + PAGE_LINK_HOURS * 3600 * 1000
      let queued = false
      for (const r of recipients) {
        const url = `${publicUrl}/answer/${links.sign({ kind: "g", ref: page.id, arg: r.userId, expiresAt })}`
        const mail = pageMail(publicUrl, { title: page.title, body: page.body, groupName }, url)
        const fresh = yield* outbox.enqueue({
          userId: r.userId,
          purpose: "page",
          refId: page.id,
          dedupeKey: `page:${page.id}:${r.userId}`,
          toAddress: r.email,
          ...mail
        })
        queued = queued || fresh
      }
      // Before the commit: the worker that finds nothing yet looks again within its poll.
      if (queued) yield* outbox.wake
    })

    return PageMail.of({ queue })
  }))
}
