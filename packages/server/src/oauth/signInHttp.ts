/**
 * `GET /oauth/sign-in?token=hll_…&next=…`: redeems a one-time sign-in link
 * (SignInLinks.ts), puts the new session in the `herald_session` cookie and
 * returns the browser to the authorization request it came from. `next` is
 * followed only to `/oauth/authorize…` on this origin (never an open
 * redirect). The secret is in the URL, so nothing is cached, no Referer
 * carries it on, and the page cannot be framed.
 */
import { OAuthApi } from "@herald/api"
import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { userAgentOf, withSessionCookie } from "../auth/SessionCookie.ts"
import { escapeHtml, pageEnd, pageHeaders, pageStart } from "./ConsentPage.ts"
import { authorizationNext, SignInLinks } from "./SignInLinks.ts"

/** The longest `token` looked at: a real one is 53 characters; anything longer is refused unread. */
const TOKEN_MAX_LENGTH = 200

/** A small self-contained page (no scripts; the authorization endpoint's headers): a title, a paragraph of escaped HTML. */
const page = (status: number, title: string, paragraph: string) =>
  HttpServerResponse.html(`${pageStart(title)}<p>${paragraph}</p>${pageEnd}`).pipe(HttpServerResponse.setStatus(status), HttpServerResponse.setHeaders(pageHeaders))

const invalidLink = page(
  400,
  "This sign-in link does not work",
  "The link is unknown, was already used, or has expired (links last 15 minutes and work once). Nobody was signed in. " +
    "Run <code>herald admin session link --user YOU</code> again for a fresh link."
)

export const OAuthSignInHandlers = HttpApiBuilder.group(OAuthApi, "oauthSignIn", (handlers) =>
  Effect.gen(function*() {
    const links = yield* SignInLinks
    return handlers.handle("signIn", ({ query, request }) =>
      Effect.gen(function*() {
        const token = query.token ?? ""
        const redeemed = token.length > TOKEN_MAX_LENGTH ? Option.none() : yield* links.redeem(token, userAgentOf(request))
        if (Option.isNone(redeemed)) return invalidLink
        const { person, session } = redeemed.value
        const next = authorizationNext(links.publicUrl, query.next)
        const response = next === undefined
          ? page(
            200,
            "Signed in",
            `Signed in as ${escapeHtml(person.name)} &lt;${escapeHtml(person.email)}&gt;. ` +
              "Go back to the authorization page and reload it to approve the client."
          )
          : HttpServerResponse.redirect(next, { status: 302, headers: pageHeaders })
        return withSessionCookie(response, session, links.publicUrl)
      }))
  }))
