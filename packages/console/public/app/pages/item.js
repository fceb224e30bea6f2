/**
 * One inbox item: its whole text, its link, and what can be done with it —
 * a prompt is answered here, a page acknowledged or escalated. Opening an
 * item marks it read; it can be marked unread again.
 */
import * as api from "../api.js"
import { html, useEffect } from "../html.js"
import { useLiveItems } from "../live.js"
import { ErrorNote, ExternalLink, Loading, missing, PageHead, Time, useAction, useLoad } from "../ui.js"
import { originLabel } from "./inbox.js"
import { PageActions } from "./oncall.js"
import { PromptView } from "./prompt.js"

export default function Item(/** @type {{ params: { id: string } }} */ { params }) {
  const { id } = params
  const loaded = useLoad(() => api.inboxItem({ params: { id } }), [id])
  const action = useAction()
  const item = loaded.data

  useLiveItems((live) => {
    if (live.id === "*" || live.id === id) loaded.reload()
  })

  // Opening an unread item reads it.
  useEffect(() => {
    if (item?.readAt === null) {
      api.inboxRead({ params: { id } }).then(
        (mark) => loaded.setData((d) => ({ ...d, readAt: mark?.readAt ?? new Date().toISOString() })),
        () => {}
      )
    }
  }, [item?.id])

  const back = html`<p class="back"><a href="/inbox">← Inbox</a></p>`
  if (item === undefined) {
    return html`${back}${loaded.loading ? html`<${Loading} />` : html`<${PageHead} title="Inbox item" /><${ErrorNote} error=${missing(loaded.error, "inbox item")} />`}`
  }
  const [origin, ref] = [item.origin, id.slice(id.indexOf(":") + 1)]
  const markUnread = () =>
    action.run(async () => {
      await api.inboxUnread({ params: { id } })
      loaded.setData((d) => ({ ...d, readAt: null }))
    })

  const detail = html`<p class="item-meta">
      <span class="badge ${origin}">${originLabel[/** @type {keyof typeof originLabel} */ (origin)] ?? origin}</span>
      <span class="source">${item.sourceName}</span>
      ${item.projectName && html`<span>${item.projectName}</span>`}
      <${Time} at=${item.createdAt} />
    </p>`

  return html`${back}
    ${origin === "interaction"
      ? html`${detail}<${PromptView} id=${ref} />`
      : html`<${PageHead} title=${item.title} />
        ${detail}
        ${item.status && html`<p><span class="state">${item.status}</span></p>`}
        ${item.summary && html`<p class="lead">${item.summary}</p>`}
        <div class="body">${item.body}</div>
        ${item.url && html`<p><${ExternalLink} href=${item.url}>Open the link</${ExternalLink}></p>`}
        ${origin === "page" && html`<${PageActions} id=${ref} status=${item.status} onChange=${() => loaded.reload()} />`}`}
    <div class="toolbar">
      ${item.readAt !== null && html`<button type="button" onClick=${markUnread} disabled=${action.busy}>Mark unread</button>`}
    </div>
    <${ErrorNote} error=${action.error} />`
}
