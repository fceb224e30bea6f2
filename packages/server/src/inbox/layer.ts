/**
 * The inbox (inbox/): reads, cursors and the live streams, over their SQL.
 * The signals the writes publish and the streams hear are the platform's.
 */
import { Layer } from "effect"
import { Inbox } from "./Inbox.ts"
import { InboxRepo } from "./InboxRepo.ts"
import { InboxStream } from "./InboxStream.ts"

export const InboxLayer = Layer.merge(Inbox.layerNoDeps.pipe(Layer.provide(InboxRepo.layer)), InboxStream.layerNoDeps)
