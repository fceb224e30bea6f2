/**
 * The one-line preview of an inbox item: plain text, whitespace collapsed, at
 * most 200 characters. A markdown body loses its syntax first (headings,
 * emphasis, links and images, code, lists, quotes, rules, HTML tags), so a
 * list or a phone shows the words, not the markup.
 */
import type { BodyFormat } from "@herald/api"

export const PREVIEW_MAX = 200

/**
 * Only the head of a markdown body is stripped: a 200-character preview never
 * needs more, and several of the patterns below backtrack on long runs, so a
 * crafted body must not cost more than this bounded head.
 */
const MARKDOWN_HEAD = 1_000

// Backslash escapes are set aside before the markup is stripped, so `\*` stays a star.
const ESCAPE = /\\([\\`*_{}[\]()#+\-.!>~|<])/g
const escaped = (i: number) => String.fromCharCode(0xe000 + i)
const RESTORE = /[\ue000-\uf8ff]/g

const stripMarkdown = (markdown: string): string => {
  const kept: Array<string> = []
  let s = markdown.replace(ESCAPE, (_, c: string) => {
    kept.push(c)
    return escaped(kept.length - 1)
  })
  s = s
    // fenced code: the fence lines go, the code stays
    .replace(/^[ \t]*(```|~~~)[^\n]*$/gm, "")
    // images before links: ![alt](src "title") → alt
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/!\[([^\]]*)\]\[[^\]]*\]/g, "$1")
    // links: [text](href) and [text][ref] → text; <https://…> → the address
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, "$1")
    .replace(/<((?:https?|mailto):[^>\s]+)>/g, "$1")
    // reference definitions: [ref]: https://…
    .replace(/^[ \t]*\[[^\]]+\]:[ \t]+\S+.*$/gm, "")
    // HTML tags and comments
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<\/?[A-Za-z][^>]*>/g, "")
    // headings (ATX and setext underlines) and horizontal rules
    .replace(/^[ \t]*#{1,6}[ \t]+/gm, "")
    .replace(/[ \t]+#+[ \t]*$/gm, "")
    .replace(/^[ \t]*(?:[-*_][ \t]*){3,}$/gm, "")
    .replace(/^[ \t]*=+[ \t]*$/gm, "")
    // blockquotes, then list markers and task boxes
    .replace(/^[ \t]*(?:>[ \t]?)+/gm, "")
    .replace(/^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?/gm, "")
    // inline code: `code` and ``code``
    .replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, "$2")
    // emphasis and strike-through; `_` only at word edges, so snake_case stays
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, "$2")
    .replace(/\*(?=\S)([^*]*?\S)\*/g, "$1")
    .replace(/(^|[^\w])_(?=\S)([^_]*?\S)_(?!\w)/g, "$1$2")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "$1")
  return s.replace(RESTORE, (c) => kept[c.charCodeAt(0) - 0xe000] ?? "")
}

/** The preview of a body: plain text on one line, at most 200 characters (an ellipsis marks a cut). */
export const previewOf = (body: string, bodyFormat: BodyFormat): string => {
  const text = (bodyFormat === "markdown" ? stripMarkdown(body.slice(0, MARKDOWN_HEAD)) : body).replace(/\s+/g, " ").trim()
  const chars = Array.from(text)
  if (chars.length <= PREVIEW_MAX) return text
  return `${chars.slice(0, PREVIEW_MAX - 1).join("").trimEnd()}…`
}
