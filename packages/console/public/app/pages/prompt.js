/**
 * A prompt and its answer: approval (Approve / Deny), yes/no, a reply, or a
 * reply picked from the agent's choices. The answer (POST
 * /interactions/{id}/answer) returns the agent's long-poll at once. The page
 * follows the prompt live: answered on another device, canceled by the
 * agent or expired, it says so and offers no buttons.
 */
import * as api from "../api.js"
import { html, useState } from "../html.js"
import { useLiveItems } from "../live.js"
import { ErrorNote, formatTime, fromNow, Loading, missing, PageHead, Time, useAction, useLoad, useTick } from "../ui.js"

const answered = {
  approved: "Approved",
  denied: "Denied",
  yes: "Yes",
  no: "No",
  replied: "Replied"
}

const kindLabel = {
  approval: "Approval",
  yes_no: "Yes or no",
  reply: "Reply"
}

/** The two buttons of a two-answer kind: [status, label] pairs. */
const buttonsOf = (/** @type {any} */ prompt) =>
  prompt.kind === "approval"
    ? [["approved", prompt.primaryLabel ?? "Approve"], ["denied", prompt.secondaryLabel ?? "Deny"]]
    : prompt.kind === "yes_no"
    ? [["yes", prompt.primaryLabel ?? "Yes"], ["no", prompt.secondaryLabel ?? "No"]]
    : []

const Outcome = (/** @type {{ prompt: any, mine: boolean }} */ { prompt, mine }) => {
  const { status } = prompt
  if (status === "expired") {
    return html`<p class="note warn" role="status">This prompt expired <${Time} at=${prompt.expiresAt} /> without an answer.</p>`
  }
  if (status === "canceled") {
    return html`<p class="note warn" role="status">The agent canceled this prompt <${Time} at=${prompt.canceledAt} />.</p>`
  }
  const label = answered[/** @type {keyof typeof answered} */ (status)] ?? status
  return html`<div class="note ok" role="status">
    <p><strong>${label}</strong>${mine ? " — your answer was sent." : " — answered elsewhere"} <${Time} at=${prompt.respondedAt} /></p>
    ${prompt.response && html`<blockquote>${prompt.response}</blockquote>`}
  </div>`
}

/** Answering a pending prompt: the buttons or reply box its kind takes. */
const Answer = (/** @type {{ prompt: any, onAnswered: (p: any) => void, expired: boolean }} */ { prompt, onAnswered, expired }) => {
  const [reply, setReply] = useState("")
  const action = useAction()
  const send = async (/** @type {string} */ status, /** @type {string | undefined} */ response) => {
    const result = await action.run(() =>
      api.answer({ params: { id: prompt.id }, body: response === undefined ? { status } : { status, response } })
    )
    if (result !== undefined) onAnswered(result)
  }
  if (expired) return html`<p class="note warn" role="status">The time to answer has run out.</p>`
  const buttons = buttonsOf(prompt)
  const error = action.error && html`<${ErrorNote} error=${action.error.code === "CONFLICT" ? { message: "This prompt is no longer waiting for an answer." } : action.error} />`
  if (buttons.length > 0) {
    return html`<div class="answer" role="group" aria-label="Answer">
      ${buttons.map(([status, label], i) =>
        html`<button type="button" class=${i === 0 ? "primary big" : "big"} disabled=${action.busy} onClick=${() => send(status, undefined)}>${label}</button>`
      )}
      ${error}
    </div>`
  }
  const submit = (/** @type {Event} */ event) => {
    event.preventDefault()
    if (reply.trim() !== "") send("replied", reply.trim())
  }
  return html`<div class="answer">
    ${prompt.choices.length > 0 && html`<div role="group" aria-label="Choices" class="choices">
      ${prompt.choices.map((/** @type {string} */ choice) =>
        html`<button type="button" class="big" disabled=${action.busy} onClick=${() => send("replied", choice)}>${choice}</button>`
      )}
    </div>`}
    <form onSubmit=${submit}>
      <label for="reply">${prompt.choices.length > 0 ? "Or write your own answer" : "Your reply"}</label>
      <textarea id="reply" rows="4" maxlength="4000" required value=${reply} onInput=${(/** @type {any} */ e) => setReply(e.currentTarget.value)}></textarea>
      <button type="submit" class="primary" disabled=${action.busy || reply.trim() === ""}>Send reply</button>
    </form>
    ${error}
  </div>`
}

/** A prompt by id, kept current; used by /prompts/{id} and an inbox item of origin `interaction`. */
export const PromptView = (/** @type {{ id: string, heading?: boolean }} */ { id, heading = true }) => {
  const [mine, setMine] = useState(false)
  const loaded = useLoad(() => api.prompt({ params: { id } }), [id])
  const now = useTick(15_000)
  useLiveItems((item) => {
    if (item.id === "*" || item.id === `interaction:${id}`) loaded.reload()
  })
  const prompt = loaded.data
  if (prompt === undefined) {
    return html`${heading && html`<${PageHead} title="Prompt" />`}${loaded.loading ? html`<${Loading} />` : html`<${ErrorNote} error=${missing(loaded.error, "prompt")} />`}`
  }
  const pending = prompt.status === "pending"
  const expired = pending && new Date(prompt.expiresAt).getTime() <= now
  return html`<article class="prompt" aria-label=${`Prompt: ${prompt.title}`}>
    ${heading ? html`<${PageHead} title=${prompt.title} />` : html`<h2>${prompt.title}</h2>`}
    <p class="item-meta">
      <span class="badge interaction">${kindLabel[/** @type {keyof typeof kindLabel} */ (prompt.kind)] ?? prompt.kind}</span>
      ${prompt.sourceName && html`<span class="source">${prompt.sourceName}</span>`}
      <span>Asked <${Time} at=${prompt.createdAt} /></span>
    </p>
    <p class="prompt-text">${prompt.prompt}</p>
    ${pending && !expired && html`<p class="muted">Expires ${fromNow(prompt.expiresAt, now)} (${formatTime(prompt.expiresAt)}).</p>`}
    ${pending
      ? html`<${Answer} prompt=${prompt} expired=${expired} onAnswered=${(/** @type {any} */ p) => {
        setMine(true)
        loaded.setData(() => p)
      }} />`
      : html`<${Outcome} prompt=${prompt} mine=${mine} />`}
    <${ErrorNote} error=${loaded.error} />
  </article>`
}

export default function PromptPage(/** @type {{ params: { id: string } }} */ { params }) {
  return html`<p class="back"><a href="/inbox">← Inbox</a></p><${PromptView} id=${params.id} />`
}
