/**
 * The HTML of the authorization endpoint: the consent page, the sign-in
 * instructions and the error page. Self-contained (no scripts, inline style
 * only), never cached, never framed (clickjacking an Approve button is the
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
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'"
}

const style = "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}" +
  "h1{font-size:1.4rem}code{background:#f3f3f3;padding:0 .2em;word-break:break-all}label{display:block;margin:.3rem 0}" +
  "fieldset{border:1px solid #ddd;margin:1rem 0}button{font-size:1rem;padding:.4rem 1.2rem;margin-right:.6rem}"

/** A page: a title and already-escaped HTML. */
const page = (status: number, title: string, html: string) =>
  HttpServerResponse.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<title>${escapeHtml(title)} · Herald</title><style>${style}</style></head>` +
      `<body><h1>${escapeHtml(title)}</h1>${html}</body></html>`
  ).pipe(HttpServerResponse.setStatus(status), HttpServerResponse.setHeaders(pageHeaders))

/** An error the person sees (never a redirect: the client or its redirect URI is not trusted). */
export const errorPage = (status: number, title: string, message: string) =>
  page(status, title, `<p>${escapeHtml(message)}</p>`)

/** No one is signed in: how to get a one-time sign-in link back to this very request. */
export const signInPage = (pathAndQuery: string) => {
  const quoted = `'${pathAndQuery.replace(/'/g, "'\\''")}'`
  return page(
    200,
    "Sign in to Herald",
    "<p>An application asks to connect to your Herald account. To approve it, sign in first: on the machine running " +
      "Herald, run</p>" +
      `<p><code>herald admin session link --user YOU --next ${escapeHtml(quoted)}</code></p>` +
      "<p>(with your email address for <code>YOU</code>) and open the link it prints in this browser. It brings you " +
      "back here, signed in.</p>"
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
    .map((s) => `<label><input type="checkbox" name="grant_scope" value="${escapeHtml(s)}" checked> <code>${escapeHtml(s)}</code></label>`)
    .join("")
  return page(
    200,
    "Connect an application",
    `<p><strong>${escapeHtml(view.clientName)}</strong> (client <code>${escapeHtml(view.clientId)}</code>, returning to ` +
      `<code>${escapeHtml(view.redirectHost)}</code>) asks to act on your Herald account.</p>` +
      `<p>Signed in as ${escapeHtml(view.person.name)} &lt;${escapeHtml(view.person.email)}&gt;.</p>` +
      `<form method="post" action="/oauth/authorize">${hidden}` +
      `<fieldset><legend>Allow it to use</legend>${boxes}</fieldset>` +
      `<button type="submit" name="decision" value="approve">Approve</button>` +
      `<button type="submit" name="decision" value="deny">Deny</button></form>` +
      "<p>You can disconnect it at any time: it is listed among your tokens (kind <code>oauth</code>).</p>"
  )
}

/** A 302 to `location`, with the endpoint's headers. */
export const redirectTo = (location: string) => HttpServerResponse.redirect(location, { status: 302, headers: pageHeaders })
