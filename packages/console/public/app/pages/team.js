/**
 * One team or family: its members, its invites (owners and admins make
 * them; the link is shown with a copy button), and leaving it.
 */
import * as api from "../api.js"
import { html, useState } from "../html.js"
import { navigate } from "../router.js"
import { ConfirmButton, CopyButton, ErrorNote, Loading, missing, PageHead, Time, useAction, useLoad } from "../ui.js"
import { kindLabel, roleLabel } from "./teams.js"

const Invites = (/** @type {{ team: any }} */ { team }) => {
  const list = useLoad(() => api.teamInvites({ params: { id: team.id } }), [team.id])
  const [email, setEmail] = useState("")
  const [role, setRole] = useState("member")
  const [created, setCreated] = useState(/** @type {any} */ (null))
  const action = useAction()
  const create = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const address = email.trim()
    // An address invites one person; a bare domain (example.org) anyone with an address there.
    const body = address.includes("@") ? { email: address, role } : { domain: address, role }
    const result = await action.run(() => api.teamInviteCreate({ params: { id: team.id }, body }))
    if (result !== undefined) {
      setCreated(result)
      setEmail("")
      list.reload()
    }
  }
  const revoke = (/** @type {string} */ inviteId) =>
    action.run(async () => {
      await api.teamInviteRevoke({ params: { id: team.id, inviteId } })
      await list.reload()
    })
  const open = (list.data?.items ?? []).filter((/** @type {any} */ i) => !i.acceptedAt && !i.revokedAt)
  return html`<section aria-labelledby="invites" class="card">
    <h2 id="invites">Invites</h2>
    ${created && html`<div class="note ok" role="status">
      <p>Send this link to ${created.invite.email ?? `anyone at ${created.invite.domain}`}. It works for 7 days.</p>
      <p><a href=${created.url} class="break">${created.url}</a></p>
      <${CopyButton} text=${created.url} label="Copy link" />
    </div>`}
    <form onSubmit=${create} class="inline">
      <label for="invite-to">E-mail address or domain</label>
      <input id="invite-to" required maxlength="254" value=${email} placeholder="ada@example.org" onInput=${(/** @type {any} */ e) => setEmail(e.currentTarget.value)} />
      <label for="invite-role">Role</label>
      <select id="invite-role" value=${role} onChange=${(/** @type {any} */ e) => setRole(e.currentTarget.value)}>
        <option value="member">Member</option>
        <option value="admin">Admin</option>
      </select>
      <button type="submit" class="primary" disabled=${action.busy}>Invite</button>
    </form>
    <${ErrorNote} error=${action.error ?? list.error} />
    ${open.length > 0 && html`<h3>Waiting to be accepted</h3><ul class="plain">${open.map((/** @type {any} */ i) =>
      html`<li key=${i.id} class="row"><span>${i.email ?? `anyone at ${i.domain}`} <span class="muted">· ${roleLabel[/** @type {"member"} */ (i.role)] ?? i.role} · expires <${Time} at=${i.expiresAt} /></span></span>
        <${ConfirmButton} label="Revoke" confirm="Yes, revoke" busy=${action.busy} onConfirm=${() => revoke(i.id)} /></li>`
    )}</ul>`}
  </section>`
}

export default function Team(/** @type {{ params: { id: string } }} */ { params }) {
  const loaded = useLoad(() => api.team({ params: { id: params.id } }), [params.id])
  const action = useAction()
  const team = loaded.data
  const back = html`<p class="back"><a href="/teams">← Teams</a></p>`
  if (team === undefined) {
    return html`${back}${loaded.loading ? html`<${Loading} />` : html`<${PageHead} title="Team" /><${ErrorNote} error=${missing(loaded.error, "team or family")} />`}`
  }
  const leave = async () => {
    if ((await action.run(() => api.teamLeave({ params: { id: team.id } }))) !== undefined) navigate("/teams")
  }
  const canInvite = team.role === "owner" || team.role === "admin"
  return html`${back}<${PageHead} title=${team.name} />
    <p class="item-meta"><span class="badge">${kindLabel[/** @type {"team"} */ (team.kind ?? "team")] ?? team.kind}</span>
      <span>Your role: ${roleLabel[/** @type {"owner"} */ (team.role)] ?? team.role}</span></p>
    <section aria-labelledby="members" class="card">
      <h2 id="members">Members</h2>
      <ul class="plain">${(team.members ?? []).map((/** @type {any} */ m) =>
        html`<li key=${m.userId}><strong>${m.name}</strong> <span class="muted">${m.email} · ${roleLabel[/** @type {"member"} */ (m.role)] ?? m.role} · joined <${Time} at=${m.joinedAt} /></span></li>`
      )}</ul>
    </section>
    ${canInvite && html`<${Invites} team=${team} />`}
    ${team.role !== "owner" && html`<section aria-labelledby="leave" class="card">
      <h2 id="leave">Leave</h2>
      <${ConfirmButton} label=${`Leave ${team.name}`} confirm="Yes, leave" busy=${action.busy} onConfirm=${leave} />
      <${ErrorNote} error=${action.error} />
    </section>`}`
}
