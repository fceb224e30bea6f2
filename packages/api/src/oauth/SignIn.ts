/**
 * `GET /oauth/sign-in?token=hll_…&next=…`: a person opens the one-time link
 * `herald admin session link` printed, which signs the browser in (the
 * `herald_session` cookie the consent page reads). A browser route: it
 * answers HTML or a redirect, never JSON, so its query is lenient (any
 * string) and the handler turns anything wrong into the same HTML page.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { oneTimeSecret } from "../Operation.ts"

/** The link's one-time `hll_…` secret: a credential in a query string, so the edge never logs it (http/Routes.ts). */
export const SignInToken = Schema.String.annotate({ identifier: "SignInToken", description: "The link's one-time `hll_…` secret." })

export const SignInQuery = Schema.Struct({
  token: Schema.optionalKey(SignInToken),
  /** Where to go once signed in: honoured only for a path starting `/oauth/authorize`. */
  next: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "SignInQuery" })
export type SignInQuery = typeof SignInQuery.Type

/** The page the route answers (a 302 to `next` when it is an authorization path). */
export const SignInPage = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" })).annotate({
  identifier: "SignInPage"
})

export class OAuthSignInGroup extends HttpApiGroup.make("oauthSignIn")
  .add(
    HttpApiEndpoint.get("signIn", "/oauth/sign-in", { query: SignInQuery, success: SignInPage }).annotateMerge(
      OpenApi.annotations({
        summary: "Sign a browser in with a one-time link",
        description: "Redeems a one-time sign-in link (`herald admin session link --user …`, valid 15 minutes, " +
          "usable once): sets the `herald_session` cookie (HttpOnly, SameSite=Lax, Path=/; Secure unless the public URL is plain http on a non-loopback host) " +
          "to a new Person API session (30 days), then redirects (302) to `next` when it is a path starting `/oauth/authorize` " +
          "(any other `next` is ignored), else answers an HTML page naming who is signed in. An unknown, used or " +
          "expired link answers 400 with an HTML page and signs no one in. Responses carry " +
          "`Referrer-Policy: no-referrer` (the secret is in the URL)."
      })
    ).pipe(oneTimeSecret)
  )
{}
