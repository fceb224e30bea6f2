/**
 * API tokens for agents: create one with chosen scopes (its secret is shown
 * once, with a copy button), list, revoke. OAuth connections — MCP clients
 * a person approved — are tokens of kind `oauth`, listed apart and revoked
 * the same way (that signs the client out).
 */
import * as api from "../api.js"
import { html, useEffect, useState } from "../html.js"
import { ConfirmButton, CopyButton, ErrorNote, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"

/** The scopes of @herald/api's Scope enumeration, in its order (a server test keeps the two equal). */
export const scopes = [
  "notifications:send",
  "interactions:create",
  "interactions:read",
  "activities:read",
  "activities:write",
  "services:read",
  "services:write",
  "devices:read",
  "events:read",
  "apps:read",
  "apps:write",
  "devices:write",
  "inbox:read",
  "inbox:write",
  "billing:read",
  "tokens:manage",
  "teams:read",
  "teams:write",
  "oncall:read",
  "oncall:write",
  "connectors:read",
  "connectors:write"
]

/** What an agent that notifies and asks needs. */
const starter = ["notifications:send", "interactions:create", "interactions:read"]

const lifetimes = [["", "Never"], ["7", "7 days"], ["30", "30 days"], ["90", "90 days"], ["365", "1 year"]]

const CreateForm = (/** @type {{ onCreated: () => void }} */ { onCreated }) => {
  const [name, setName] = useState("")
  const [chosen, setChosen] = useState(new Set(starter))
  const [days, setDays] = useState("")
  const [created, setCreated] = useState(/** @type {any} */ (null))
  const action = useAction()
  // The secret appears above the form: bring it into view, selected, ready to copy.
  useEffect(() => {
    if (created) /** @type {HTMLInputElement | null} */ (document.getElementById("secret"))?.focus()
  }, [created])
  const toggle = (/** @type {string} */ scope) => {
    const next = new Set(chosen)
    if (next.has(scope)) next.delete(scope)
    else next.add(scope)
    setChosen(next)
  }
  const submit = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const expiresAt = days === "" ? null : new Date(Date.now() + Number(days) * 86_400_000).toISOString()
    const result = await action.run(() =>
      api.tokenCreate({ body: { name: name.trim(), scopes: scopes.filter((s) => chosen.has(s)), expiresAt } })
    )
    if (result !== undefined) {
      setCreated(result)
      setName("")
      onCreated()
    }
  }
  return html`<section aria-labelledby="new-token" class="card">
    <h2 id="new-token">New token</h2>
    ${created && html`<div class="note ok secret" role="status">
      <p><strong>${created.token.name}</strong> is ready. Copy its secret now: it is shown this once.</p>
      <label for="secret">Secret</label>
      <input id="secret" readonly value=${created.secret} onFocus=${(/** @type {any} */ e) => e.currentTarget.select()} />
      <${CopyButton} text=${created.secret} label="Copy secret" />
      <p><button type="button" onClick=${() => setCreated(null)}>Done</button></p>
    </div>`}
    <form onSubmit=${submit}>
      <label for="token-name">Name</label>
      <input id="token-name" required maxlength="100" placeholder="e.g. laptop agent" value=${name} onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} />
      <fieldset class="scopes">
        <legend>Scopes</legend>
        ${scopes.map((scope) =>
          html`<label class="check"><input type="checkbox" checked=${chosen.has(scope)} onChange=${() => toggle(scope)} /> <code>${scope}</code></label>`
        )}
      </fieldset>
      <label for="token-expiry">Expires</label>
      <select id="token-expiry" value=${days} onChange=${(/** @type {any} */ e) => setDays(e.currentTarget.value)}>
        ${lifetimes.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
      </select>
      <button type="submit" class="primary" disabled=${action.busy}>Create token</button>
      <${ErrorNote} error=${action.error} />
    </form>
  </section>`
}

const TokenRow = (/** @type {{ token: any, onRevoked: () => void }} */ { token, onRevoked }) => {
  const action = useAction()
  const revoke = async () => {
    if ((await action.run(() => api.tokenRevoke({ params: { id: token.id } }))) !== undefined) onRevoked()
  }
  const oauth = token.kind === "oauth"
  const title = oauth ? token.oauthClient?.name ?? token.name : token.name
  return html`<li class=${token.revokedAt ? "card revoked" : "card"}>
    <h3>${title} <code class="muted">${token.prefix}…</code></h3>
    <p class="item-meta">
      <span>Created <${Time} at=${token.createdAt} /></span>
      <span>${token.lastUsedAt ? html`Used <${Time} at=${token.lastUsedAt} />` : "Never used"}</span>
      ${token.expiresAt && html`<span>Expires <${Time} at=${token.expiresAt} /></span>`}
      ${token.revokedAt && html`<span class="badge">Revoked <${Time} at=${token.revokedAt} /></span>`}
    </p>
    <p class="scope-list">${token.scopes.map((/** @type {string} */ s) => html`<code>${s}</code> `)}</p>
    ${!token.revokedAt && html`<${ConfirmButton} label=${oauth ? "Disconnect" : "Revoke"} confirm=${oauth ? `Yes, disconnect ${title}` : `Yes, revoke ${title}`} busy=${action.busy} onConfirm=${revoke} />`}
    <${ErrorNote} error=${action.error} />
  </li>`
}

export default function Tokens() {
  const [extra, setExtra] = useState(/** @type {{ items: any[], nextCursor: string | null } | null} */ (null))
  const loaded = useLoad(async () => {
    setExtra(null)
    return api.tokens({ query: { limit: 100 } })
  }, [])
  const more = useAction()
  const all = [...(loaded.data?.items ?? []), ...(extra?.items ?? [])]
  const nextCursor = extra ? extra.nextCursor : loaded.data?.nextCursor ?? null
  const loadMore = () =>
    more.run(async () => {
      const page = await api.tokens({ query: { limit: 100, cursor: nextCursor } })
      setExtra((e) => ({ items: [...(e?.items ?? []), ...page.items], nextCursor: page.nextCursor }))
    })
  const list = (/** @type {any[]} */ items, /** @type {string} */ empty) =>
    items.length === 0
      ? html`<p class="empty">${empty}</p>`
      : html`<ul class="cards">${items.map((t) => html`<${TokenRow} key=${t.id} token=${t} onRevoked=${() => loaded.reload()} />`)}</ul>`
  return html`<${PageHead} title="Tokens" />
    <p class="muted">An agent uses an API token to notify and ask you (<code>Authorization: Bearer hld_…</code>).</p>
    <${CreateForm} onCreated=${() => loaded.reload()} />
    <${ErrorNote} error=${loaded.error ?? more.error} />
    ${loaded.data === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : html`<h2>API tokens</h2>
        ${list(all.filter((t) => t.kind !== "oauth"), "No API tokens yet.")}
        <h2>Connected applications (OAuth)</h2>
        ${list(all.filter((t) => t.kind === "oauth"), "No application is connected. MCP clients that you approve appear here.")}
        ${nextCursor && html`<p><button type="button" onClick=${loadMore} disabled=${more.busy}>Load more</button></p>`}`}`
}
