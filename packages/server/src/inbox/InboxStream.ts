/**
 * The live inbox of GET /api/app/inbox/stream: the signed-in person's inbox
 * changes (InboxSignals.ts) as server-sent events, `event: item` with
 * `data: {"id","origin"}`, and a `: ping` comment when it opens and every 25 s
 * so proxies keep the connection and the browser knows it is alive. The
 * stream ends the moment the session does (signed out, revoked on any
 * process, expired), and every stream ends when the server begins to shut
 * down (`endAll`), so its connections close and shutdown does not wait on
 * them. Comments are not events, so the text is written here rather than
 * through the contract's event encoder.
 */
import { INBOX_STREAM_PING_SECONDS, INBOX_STREAMS_PER_PERSON, RateLimited } from "@herald/api"
import type { PersonPrincipal } from "@herald/api"
import { Context, Deferred, Duration, Effect, Layer, Option, Stream } from "effect"
import type { Scope } from "effect"
import { Credentials } from "../auth/Credentials.ts"
import { InboxSignals } from "./InboxSignals.ts"

const ping = ": ping\n\n"

/** One change as its event: the inbox id and its origin (`notification` of `notification:anot_…`). */
export const itemEvent = (ref: string) =>
  `event: item\ndata: ${JSON.stringify({ id: ref, origin: ref.slice(0, ref.indexOf(":")) })}\n\n`

export class InboxStream extends Context.Service<InboxStream, {
  /**
   * The person's event stream, subscribed for the life of the scope (the
   * request's: it lasts until the response ends). 429 when the person holds
   * the most streams this process allows already.
   */
  readonly open: (person: PersonPrincipal) => Effect.Effect<Stream.Stream<Uint8Array>, RateLimited, Scope.Scope>
  /** Ends every stream, and any opened after (the server is shutting down). */
  readonly endAll: Effect.Effect<void>
}>()("herald/InboxStream") {
  static readonly layerNoDeps = Layer.effect(InboxStream, Effect.gen(function*() {
    const signals = yield* InboxSignals
    const credentials = yield* Credentials
    const shuttingDown = yield* Deferred.make<void>()

    const open = Effect.fn("InboxStream.open")(function*(person: PersonPrincipal) {
      const subscription = yield* signals.subscribe(person.userId, INBOX_STREAMS_PER_PERSON)
      if (Option.isNone(subscription)) {
        return yield* new RateLimited({
          error: `At most ${INBOX_STREAMS_PER_PERSON} inbox streams may be open at once; close another one first.`
        })
      }
      const items = Stream.fromQueue(subscription.value).pipe(Stream.map(itemEvent))
      const pings = Stream.tick(Duration.seconds(INBOX_STREAM_PING_SECONDS)).pipe(Stream.map(() => ping))
      return Stream.merge(pings, items).pipe(
        // A clean end, not a failure: the response is already 200; a reconnect gets the 401 (or another node).
        Stream.interruptWhen(Effect.raceFirst(Effect.ignore(credentials.ended(person.sessionId)), Deferred.await(shuttingDown))),
        Stream.encodeText
      )
    })

    return InboxStream.of({ open, endAll: Effect.asVoid(Deferred.succeed(shuttingDown, undefined)) })
  }))

  static readonly layer = InboxStream.layerNoDeps.pipe(Layer.provide(InboxSignals.layer))
}
