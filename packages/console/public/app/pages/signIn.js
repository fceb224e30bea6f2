/**
 * Sign-in a person does alone: an e-mailed link (POST /auth/email-link; the
 * answer never says whether the address has an account), or a passkey made
 * earlier in Settings. A link that did not work comes back here with
 * `?error=link`.
 */
import * as api from "../api.js"
import { html, useState } from "../html.js"
import { peekNext, takeNext } from "../router.js"
import { ErrorNote, PageHead, useAction } from "../ui.js"
import { getPasskey, passkeyMessage, passkeysSupported } from "../webauthn.js"

const linkErrors = {
  link: "That sign-in link did not work: it is unknown, was already used, or has expired. Ask for a new one below."
}

export default function SignIn() {
  const [email, setEmail] = useState("")
  const [sentTo, setSentTo] = useState("")
  const mail = useAction()
  const passkey = useAction()
  const error = new URLSearchParams(location.search).get("error")

  const sendLink = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const address = email.trim()
    // The link lands where the person was going (an invite, a prompt), in whichever tab opens it.
    const next = peekNext()
    const ok = await mail.run(() => api.emailLink({ body: next === undefined ? { email: address } : { email: address, next } }))
    if (ok !== undefined) setSentTo(address)
  }

  const withPasskey = async () => {
    const me = await passkey.run(async () => {
      const { challengeId, options } = await api.passkeySignInOptions()
      let response
      try {
        response = await getPasskey(options)
      } catch (e) {
        throw new Error(passkeyMessage(e))
      }
      return api.passkeySignIn({ body: { challengeId, response } })
    })
    // The session cookie is set: start the console afresh, signed in.
    if (me !== undefined) {
      const next = takeNext() ?? "/inbox"
      location.assign(next)
    }
  }

  return html`<${PageHead} title="Sign in to Herald" tab="Sign in" />
    ${error && html`<p class="note error" role="alert">${linkErrors[/** @type {"link"} */ (error)] ?? "Signing in did not work. Try again."}</p>`}
    <section aria-labelledby="by-email">
      <h2 id="by-email">With a link by e-mail</h2>
      ${sentTo
        ? html`<p class="note ok" role="status">If <strong>${sentTo}</strong> has a Herald account, a sign-in link is on its way.
            Open it in this browser; it works once, for 15 minutes.</p>
            <p class="muted">No mail server set up? The link is written to Herald's log instead.</p>
            <p><button type="button" onClick=${() => setSentTo("")}>Use another address</button></p>`
        : html`<form onSubmit=${sendLink}>
            <label for="email">E-mail address</label>
            <input id="email" type="email" name="email" autocomplete="username webauthn" required maxlength="254"
              value=${email} onInput=${(/** @type {any} */ e) => setEmail(e.currentTarget.value)} />
            <button type="submit" class="primary" disabled=${mail.busy}>${mail.busy ? "Sending…" : "Send me a sign-in link"}</button>
            <${ErrorNote} error=${mail.error} />
          </form>`}
    </section>
    <section aria-labelledby="by-passkey">
      <h2 id="by-passkey">With a passkey</h2>
      ${passkeysSupported()
        ? html`<p class="muted">Made one in Settings? Use it instead of a link.</p>
            <button type="button" onClick=${withPasskey} disabled=${passkey.busy}>${passkey.busy ? "Waiting for the passkey…" : "Sign in with a passkey"}</button>
            <${ErrorNote} error=${passkey.error} />`
        : html`<p class="muted">This browser cannot use passkeys.</p>`}
    </section>`
}
