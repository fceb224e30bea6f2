/**
 * An invite link (`/join/<code>`, the `url` of a created invite): what is
 * being joined (GET /invites/{code}), then accepting it (POST
 * /invites/accept). Someone signed out signs in first and comes back here.
 */
import * as api from "../api.js"
import { html } from "../html.js"
import { navigate } from "../router.js"
import { ErrorNote, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"
import { kindLabel, roleLabel } from "./teams.js"

const refusals = {
  NOT_FOUND: "This invite link is unknown, already used, revoked or expired. Ask for a new one.",
  FORBIDDEN: "This invite is for another e-mail address than the one you are signed in with.",
  CONFLICT: "You are already a member.",
  LIMIT_REACHED: "This family is full."
}

const explain = (/** @type {any} */ error) =>
  error && { message: refusals[/** @type {keyof typeof refusals} */ (error.code)] ?? error.message }

export default function Join(/** @type {{ params: { code: string }, me: any }} */ { params, me }) {
  const preview = useLoad(() => api.invitePreview({ params: { code: params.code } }), [params.code])
  const action = useAction()
  const accept = async () => {
    const team = await action.run(() => api.inviteAccept({ body: { code: params.code } }))
    if (team !== undefined) navigate(`/teams/${encodeURIComponent(team.id)}`)
  }
  const invite = preview.data
  if (invite === undefined) {
    return html`<${PageHead} title="Join" />${preview.loading ? html`<${Loading} />` : html`<${ErrorNote} error=${explain(preview.error)} />`}`
  }
  const kind = (kindLabel[/** @type {"team"} */ (invite.kind)] ?? "Team").toLowerCase()
  const role = (roleLabel[/** @type {"member"} */ (invite.role)] ?? invite.role ?? "member").toLowerCase()
  const forSomeoneElse = invite.email !== null && invite.email !== undefined && invite.email.toLowerCase() !== me.email.toLowerCase()
  return html`<${PageHead} title=${`Join ${invite.teamName}`} />
    <div class="card">
      <p><strong>${invite.invitedBy}</strong> invites you to the ${kind} <strong>${invite.teamName}</strong>, as ${role === "admin" ? "an" : "a"} ${role}.</p>
      <p class="muted">${invite.email ? `For ${invite.email}. ` : invite.domain ? `For anyone with an address at ${invite.domain}. ` : ""}
        The invite expires <${Time} at=${invite.expiresAt} />.</p>
      ${invite.alreadyMember
        ? html`<p class="note ok" role="status">You are already a member. <a href="/teams">See your teams</a>.</p>`
        : forSomeoneElse
        ? html`<p class="note warn" role="status">You are signed in as ${me.email}: this invite is for ${invite.email}.</p>`
        : html`<button type="button" class="primary big" onClick=${accept} disabled=${action.busy}>Accept and join</button>`}
      <${ErrorNote} error=${explain(action.error)} />
    </div>`
}
