/**
 * The inbox: everything that reached the person (notifications, prompts,
 * pages, events), newest first, with unread state kept on the server. It
 * stays current without a reload: each live event (live.js) fetches the one
 * item it names and puts it in its place.
 */
import * as api from "../api.js"
import { html, useState } from "../html.js"
import { useLiveItems, useLiveStatus } from "../live.js"
import { ErrorNote, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"

const PAGE = 30

export const originLabel = {
  interaction: "Prompt",
  notification: "Notification",
  page: "Page",
  event: "Event"
}

const byNewest = (/** @type {any} */ a, /** @type {any} */ b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)

const LiveBadge = () => {
  const status = useLiveStatus()
  const text = status === "live" ? "Live" : status === "offline" ? "Offline: retrying" : "Connecting…"
  return html`<span class="live ${status}" role="status" aria-live="polite">${text}</span>`
}

const Row = (/** @type {{ item: any }} */ { item }) => {
  const unread = item.readAt === null
  return html`<li class=${unread ? "item unread" : "item"}>
    <a href=${`/inbox/${encodeURIComponent(item.id)}`}>
      <span class="item-meta">
        <span class="badge ${item.origin}">${originLabel[/** @type {keyof typeof originLabel} */ (item.origin)] ?? item.origin}</span>
        <span class="source">${item.sourceName}</span>
        <${Time} at=${item.createdAt} />
      </span>
      <span class="item-title">${unread && html`<span class="dot" aria-hidden="true"></span><span class="sr-only">Unread: </span>`}${item.title}</span>
      ${item.preview && html`<span class="item-preview">${item.preview}</span>`}
    </a>
  </li>`
}

export default function Inbox() {
  const [unreadOnly, setUnreadOnly] = useState(false)
  const [more, setMore] = useState(/** @type {{ items: any[], nextCursor: string | null } | null} */ (null))
  const list = useLoad(async () => {
    setMore(null)
    return api.inbox({ query: { limit: PAGE, unread: unreadOnly ? "true" : undefined } })
  }, [unreadOnly])
  const action = useAction()

  const items = [...(list.data?.items ?? []), ...(more?.items ?? [])]
  const nextCursor = more ? more.nextCursor : list.data?.nextCursor ?? null

  useLiveItems(async ({ id }) => {
    if (id === "*") return list.reload()
    let item = null
    try {
      item = await api.inboxItem({ params: { id } })
    } catch (e) {
      if (/** @type {any} */ (e).status !== 404) return
    }
    const place = (/** @type {any[]} */ current) => {
      const rest = current.filter((i) => i.id !== id)
      if (item === null || (unreadOnly && item.readAt !== null)) return rest
      return [...rest, item].sort(byNewest)
    }
    list.setData((data) => ({ ...(data ?? { nextCursor: null }), items: place(data?.items ?? []) }))
    setMore((m) => m && { ...m, items: m.items.filter((i) => i.id !== id) })
  })

  const loadMore = () =>
    action.run(async () => {
      const page = await api.inbox({ query: { limit: PAGE, cursor: nextCursor, unread: unreadOnly ? "true" : undefined } })
      setMore((m) => ({ items: [...(m?.items ?? []), ...page.items], nextCursor: page.nextCursor }))
    })

  const readAll = () =>
    action.run(async () => {
      await api.inboxReadAll({ body: list.data?.readThroughToken ? { readThroughToken: list.data.readThroughToken } : {} })
      await list.reload()
    })

  return html`<${PageHead} title="Inbox"><${LiveBadge} /></${PageHead}>
    <div class="toolbar" role="group" aria-label="Show">
      <button type="button" aria-pressed=${!unreadOnly} onClick=${() => setUnreadOnly(false)}>All</button>
      <button type="button" aria-pressed=${unreadOnly} onClick=${() => setUnreadOnly(true)}>Unread</button>
      <button type="button" class="push-right" onClick=${readAll} disabled=${action.busy || items.every((i) => i.readAt !== null)}>Mark all read</button>
    </div>
    <${ErrorNote} error=${list.error ?? action.error} />
    ${list.data === undefined
      ? list.loading ? html`<${Loading} />` : null
      : items.length === 0
      ? html`<p class="empty">${unreadOnly ? "Nothing unread." : "Nothing yet. When an agent notifies or asks you, it shows up here at once."}</p>`
      : html`<ul class="items" aria-label="Inbox items">${items.map((item) => html`<${Row} key=${item.id} item=${item} />`)}</ul>`}
    ${nextCursor && html`<p><button type="button" onClick=${loadMore} disabled=${action.busy}>Load more</button></p>`}`
}
