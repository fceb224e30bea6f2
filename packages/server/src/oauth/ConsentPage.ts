/**
 * The HTML of the authorization endpoint: the consent page, the sign-in
 * instructions and the error page. No scripts, the console's stylesheet,
 * never cached, never framed (clickjacking an Approve button is the
 * classic attack on a consent page); every interpolated value is escaped —
 * a client's name is whatever its registrant chose.
 */
import { HttpServerResponse } from "effect/http"

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** The headers of every page and redirect of the authorization endpoint. */
export const pageHeaders = {
  "cache-control": "no-store",
  "pragma": "no-cache",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  // No form-action: browsers apply it to the redirect after the form is posted, which goes to the client.
  // The console's stylesheet, from this origin: these pages look like the console they belong to.
  "content-security-policy": "default-src 'none'; style-src 'self'; base-uri 'none'; frame-ancestors 'none'"
}

/** The `<head>` and opening of a page in the console's look: its stylesheet, a narrow column. */
export const pageStart = (title: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escapeHtml(title)} · Herald</title><link rel="stylesheet" href="/console/console.css"></head>` +
  `<body><main id="main" class="narrow"><h1>${escapeHtml(title)}</h1>`

export const pageEnd = "</main></body></html>"

/** A page: a title and already-escaped HTML. */
const page = (status: number, title: string, html: string) =>
  HttpServerResponse.html(`${pageStart(title)}${html}${pageEnd}`).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(pageHeaders)
  )

/** An error the person sees (never a redirect: the client or its redirect URI is not trusted). */
export const errorPage = (status: number, title: string, message: string) =>
  page(status, title, `<p>${escapeHtml(message)}</p>`)

/** No one is signed in: how to get a one-time sign-in link back to this very request. */
export const signInPage = (pathAndQuery: string) => {
  const quoted = `'${pathAndQuery.replace(/'/g, "'\\''")}'`
  return page(
    200,
    "Sign in to Herald",
    "<p>An application asks to connect to your Herald account. To approve it, sign in first:</p>" +
      `<p><a href="/sign-in?next=${escapeHtml(encodeURIComponent(pathAndQuery))}">Sign in</a> with an e-mailed link or a ` +
      "passkey; it brings you back here.</p>" +
      "<p>Or, on the machine running Herald, run " +
      `<code class="break">herald admin session link --user YOU --next ${escapeHtml(quoted)}</code> ` +
      "(with your email address for <code>YOU</code>) and open the link it prints in this browser.</p>"
  )
}

export interface ConsentView {
  readonly clientName: string
  readonly clientId: string
  readonly redirectHost: string
  readonly person: { readonly name: string; readonly email: string }
  readonly scopes: ReadonlyArray<string>
  /** The request's fields and the CSRF token, carried back by the form. */
  readonly hidden: Readonly<Record<string, string>>
}

/** The consent page: who asks, who is signed in, one checkbox per requested scope, Approve or Deny. */
export const consentPage = (view: ConsentView) => {
  const hidden = Object.entries(view.hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("")
  const boxes = view.scopes
    .map((s) => `<label class="check"><input type="checkbox" name="grant_scope" value="${escapeHtml(s)}" checked> <code>${escapeHtml(s)}</code></label>`)
    .join("")
  return page(
    200,
    "Connect an application",
    `<p><strong>${escapeHtml(view.clientName)}</strong> (client <code class="break">${escapeHtml(view.clientId)}</code>, returning to ` +
      `<code>${escapeHtml(view.redirectHost)}</code>) asks to act on your Herald account.</p>` +
      `<p>Signed in as ${escapeHtml(view.person.name)} &lt;${escapeHtml(view.person.email)}&gt;.</p>` +
      `<form method="post" action="/oauth/authorize">${hidden}` +
      `<fieldset><legend>Allow it to use</legend>${boxes}</fieldset>` +
      `<button type="submit" name="decision" value="approve" class="primary">Approve</button> ` +
      `<button type="submit" name="decision" value="deny">Deny</button></form>` +
      "<p>You can disconnect it at any time: it is listed among your tokens (kind <code>oauth</code>).</p>"
  )
}

/** A 302 to `location`, with the endpoint's headers. */
export const redirectTo = (location: string) => HttpServerResponse.redirect(location, { status: 302, headers: pageHeaders })
