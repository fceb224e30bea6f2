/**
 * The pages the channel's links open (`/answer/{token}`): a GET shows what the
 * link would do and a button; only the button's POST does it — mail scanners
 * and link previews follow links, so a GET never answers. No scripts; the
 * console's stylesheet; never cached, framed or referred (the token is in the
 * URL); every value shown escaped; the form posts back to the same path, and
 * nothing redirects anywhere.
 *
 * A token that does not check out (Links.ts) answers 404, whatever it names.
 * A link past its end answers 410. A prompt's answer goes through the same
 * entity call as the Person API's (Interactions.answer), so the waiters and
 * reply webhooks see it, with no responding device; a page's acknowledgement
 * through Pages.acknowledge, as the person the link was mailed to. A link used
 * once finds its item answered (or acknowledged) and says so (409).
 */
import type { AnswerStatus, InboxInteraction, OncallPage } from "@herald/api"
import { Clock, Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import { Interactions } from "../interactions/Interactions.ts"
import { Pages } from "../oncall/Pages.ts"
import { textHasNul } from "../http/StorableText.ts"
import { escapeHtml, pageEnd, pageStart } from "../oauth/ConsentPage.ts"
import { ChannelRepo } from "./ChannelRepo.ts"
import { EmailChannels } from "./EmailChannels.ts"
import { EmailLinks } from "./Links.ts"
import type { LinkClaims } from "./Links.ts"
import { answersOf } from "./MailText.ts"

export const ANSWER_PATH = "/answer/:token"

/** A free-text reply's longest (as the Person API's answer). */
const RESPONSE_MAX = 4000

export const answerPageHeaders = {
  "cache-control": "no-store",
  "pragma": "no-cache",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; style-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
}

const page = (status: number, title: string, html: string) =>
  HttpServerResponse.html(`${pageStart(title)}${html}${pageEnd}`).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(answerPageHeaders)
  )

const message = (status: number, title: string, text: string) => page(status, title, `<p>${escapeHtml(text)}</p>`)

const notFound = message(404, "Link not found", "This link is not valid. Check that it was copied whole.")
const expired = message(410, "Link expired", "This link has expired. Open Herald to see what is still waiting.")
const unavailable = message(503, "Try again", "Herald is busy for a moment. Reload this page to try again.")

const form = (action: string, inner: string, button: string) =>
  `<form method="post" action="${escapeHtml(action)}">${inner}<button type="submit" class="primary">${escapeHtml(button)}</button></form>`

const endedText = (status: string) =>
  status === "expired" ? "This prompt expired before it was answered." :
  status === "canceled" ? "This prompt was withdrawn by whoever asked." :
  `This prompt was already answered (${status}).`

/** What a prompt link answers: a status and, for a choice, its text; a free reply reads the form. */
const answerOf = (prompt: InboxInteraction, arg: string): { readonly label: string; readonly status: AnswerStatus; readonly response: string | null } | undefined => {
  const offered = answersOf(prompt.kind, prompt.choices).find((a) => a.arg === arg)
  if (offered === undefined) return undefined
  if (arg.startsWith("c")) return { label: offered.label, status: "replied", response: prompt.choices[Number(arg.slice(1))]! }
  return { label: offered.label, status: arg === "r" ? "replied" : arg as AnswerStatus, response: null }
}

const promptHead = (p: InboxInteraction) =>
  `<p>${escapeHtml(p.sourceName)} asks:</p><h2>${escapeHtml(p.title)}</h2><p class="pre">${escapeHtml(p.prompt)}</p>`

export const AnswerRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const links = yield* EmailLinks
    const channels = yield* ChannelRepo
    const emailChannels = yield* EmailChannels
    const interactions = yield* Interactions
    const pages = yield* Pages

    /** The link's claims when it checks out and is not past its end; else the page to answer. */
    const claimsOf = Effect.gen(function*() {
      const { token } = yield* HttpRouter.params
      const claims = token === undefined ? undefined : links.verify(token)
      if (claims === undefined) return { response: notFound } as const
      if ((yield* Clock.currentTimeMillis) >= claims.expiresAt) return { response: expired } as const
      return { claims, action: `/answer/${token}` } as const
    })

    const promptOf = (claims: LinkClaims) =>
      Effect.gen(function*() {
        const owner = yield* channels.fallbackOwner(claims.ref)
        if (owner === undefined) return undefined
        const found = yield* Effect.option(interactions.getForPerson(owner, claims.ref))
        return Option.isNone(found) ? undefined : { owner, prompt: found.value }
      })

    const pageOf = (claims: LinkClaims) => Effect.option(pages.get(claims.arg, claims.ref)).pipe(Effect.map(Option.getOrUndefined))

    const pageEnded = (p: OncallPage) => message(409, "Already handled", `This page is ${p.status} already.`)

    const show = Effect.gen(function*() {
      const checked = yield* claimsOf
      if ("response" in checked) return checked.response
      const { action, claims } = checked
      switch (claims.kind) {
        case "p": {
          const found = yield* promptOf(claims)
          if (found === undefined) return notFound
          const { prompt } = found
          if (prompt.status !== "pending") return message(409, "Already answered", endedText(prompt.status))
          const answer = answerOf(prompt, claims.arg)
          if (answer === undefined) return notFound
          const inner = claims.arg === "r"
            ? `<label for="response">Your reply</label><textarea id="response" name="response" rows="5" maxlength="${RESPONSE_MAX}" required></textarea>`
            : `<p>Your answer: <strong>${escapeHtml(answer.label)}</strong></p>`
          return page(200, "Confirm your answer", promptHead(prompt) + form(action, inner, claims.arg === "r" ? "Send reply" : answer.label))
        }
        case "g": {
          const found = yield* pageOf(claims)
          if (found === undefined) return notFound
          if (found.status !== "triggered") return pageEnded(found)
          return page(200, "Acknowledge the page", `<h2>${escapeHtml(found.title)}</h2>` +
            (found.body === null ? "" : `<p class="pre">${escapeHtml(found.body)}</p>`) + form(action, "", "Acknowledge"))
        }
        case "v":
          return page(200, "Confirm your address", "<p>Confirm that this e-mail address is yours, so Herald may mail you " +
            "prompts and pages with links that answer for you.</p>" + form(action, "", "Confirm address"))
      }
    })

    const act = Effect.gen(function*() {
      const checked = yield* claimsOf
      if ("response" in checked) return checked.response
      const { claims } = checked
      switch (claims.kind) {
        case "p": {
          const found = yield* promptOf(claims)
          if (found === undefined) return notFound
          const answer = answerOf(found.prompt, claims.arg)
          if (answer === undefined) return notFound
          let response = answer.response
          if (claims.arg === "r") {
            const request = yield* HttpServerRequest.HttpServerRequest
            const body = yield* Effect.orElseSucceed(request.urlParamsBody, () => UrlParams.empty)
            const text = Option.getOrElse(UrlParams.getFirst(body, "response"), () => "").trim()
            // The database stores neither NUL nor a lone surrogate (http/StorableText.ts).
            if (text.length === 0 || text.length > RESPONSE_MAX || textHasNul(text) || !text.isWellFormed()) {
              return message(400, "Reply not sent", `Write a reply of 1 to ${RESPONSE_MAX} characters, then send it again.`)
            }
            response = text
          }
          return yield* interactions.answer(found.owner, claims.ref, {
            status: answer.status,
            ...(response === null ? {} : { response })
          }).pipe(
            Effect.as(message(200, "Answered", `Your answer was sent: ${claims.arg === "r" ? "your reply" : answer.label}.`)),
            Effect.catchTags({
              InteractionNotPending: () =>
                Effect.map(promptOf(claims), (again) => message(409, "Already answered", endedText(again?.prompt.status ?? "answered"))),
              AnswerMismatch: () => Effect.succeed(notFound),
              NotFound: () => Effect.succeed(notFound),
              ServiceUnavailable: () => Effect.succeed(unavailable)
            })
          )
        }
        case "g": {
          // Acknowledging an acknowledged page is no error to the Person API; a link is used once.
          const current = yield* pageOf(claims)
          if (current === undefined) return notFound
          if (current.status !== "triggered") return pageEnded(current)
          const request = yield* HttpServerRequest.HttpServerRequest
          const actor = {
            userId: claims.arg,
            tokenId: null,
            ip: Option.getOrNull(request.remoteAddress),
            userAgent: "herald e-mail link"
          }
          return yield* pages.acknowledge(actor, claims.ref).pipe(
            Effect.as(message(200, "Acknowledged", "The page is acknowledged: escalation stops.")),
            Effect.catchTags({
              Conflict: () => Effect.map(pageOf(claims), (p) => p === undefined ? notFound : pageEnded(p)),
              NotFound: () => Effect.succeed(notFound),
              ServiceUnavailable: () => Effect.succeed(unavailable)
            })
          )
        }
        case "v": {
          const done = yield* emailChannels.confirm(claims.ref, claims.arg)
          return done
            ? message(200, "Address confirmed", "Herald may now mail you prompts and pages, as your e-mail settings say.")
            : message(410, "Link expired", "Your account's address changed since this link was sent. Ask for a new one in your settings.")
        }
      }
    })

    yield* router.add("GET", ANSWER_PATH, show)
    yield* router.add("POST", ANSWER_PATH, act)
  })
)
