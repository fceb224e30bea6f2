/**
 * `github` (repository and organization webhooks, `X-GitHub-Event`): one line
 * of title per event, the details a person acts on in the body, the page to
 * open as the link. A completed workflow run is an alert of its workflow and
 * branch: a failure fires it (`high`), the next success resolves it.
 */
import type { InboundRequest, Mapped, Refusal } from "./Inbound.ts"
import { field, finish, first, isRecord, lines, str } from "./Inbound.ts"

const firstLine = (text: unknown) => str(text)?.split("\n")[0]

export const mapGitHub = (request: InboundRequest, value: unknown): Mapped | Refusal => {
  const v = isRecord(value) ? value : {}
  const event = request.headers["x-github-event"] ?? "event"
  const action = str(v.action)
  const repo = first(field(v.repository, "full_name"), field(v.organization, "login")) ?? "GitHub"
  const sender = str(field(v.sender, "login"))
  const fallback = { title: `${repo}: ${event}${action !== undefined ? ` ${action}` : ""}` }

  if (event === "ping") {
    return finish("github", { title: `${repo}: webhook added`, body: first(v.zen) ?? "GitHub can reach Herald.", priority: "low" }, value, { strict: false })
  }
  if (event === "push") {
    const commits = (Array.isArray(v.commits) ? v.commits : []).filter(isRecord)
    const branch = str(v.ref)?.replace(/^refs\/(heads|tags)\//, "") ?? "?"
    return finish("github", {
      title: `${repo}: ${commits.length} commit${commits.length === 1 ? "" : "s"} to ${branch}`,
      body: lines(
        ...commits.slice(0, 5).map((c) => `• ${firstLine(c.message) ?? str(c.id)?.slice(0, 7)}${str(field(c.author, "name")) !== undefined ? ` (${str(field(c.author, "name"))})` : ""}`),
        commits.length > 5 ? `… and ${commits.length - 5} more` : undefined,
        commits.length === 0 ? `${sender ?? "someone"} pushed ${branch}` : undefined
      ),
      url: first(v.compare, field(v.head_commit, "url"))
    }, value, { strict: false })
  }
  if (event === "workflow_run" || event === "check_suite" || event === "check_run") {
    const run = (isRecord(v[event]) ? v[event] : {}) as Record<string, unknown>
    const conclusion = str(run.conclusion)
    const failed = conclusion === "failure" || conclusion === "timed_out" || conclusion === "startup_failure"
    const completed = action === "completed" && conclusion !== undefined
    const name = first(run.name, field(v.workflow, "name"), run.workflow_id, event)
    const branch = first(run.head_branch, field(run.check_suite, "head_branch"))
    return finish("github", {
      title: `${repo}: ${name} ${completed ? conclusion : action ?? str(run.status) ?? ""}`.trim(),
      body: lines(first(run.display_title, firstLine(field(run.head_commit, "message")), field(run.output, "title")), branch !== undefined ? `on ${branch}` : undefined) ||
        `${event} ${action ?? ""}`.trim(),
      url: first(run.html_url, run.details_url),
      priority: !completed ? "low" : failed ? "high" : "normal",
      alertKey: completed ? `${event}:${repo}:${first(run.workflow_id, run.name) ?? ""}:${branch ?? ""}` : null,
      state: !completed ? null : failed ? "firing" : conclusion === "success" ? "resolved" : null
    }, value, { strict: false })
  }
  // Issues, pull requests, comments, releases and the rest: the item's title and link.
  const item = [v.pull_request, v.issue, v.discussion, v.release, v.comment, v.alert].find(isRecord)
  const number = str(field(item, "number"))
  return finish("github", {
    title: `${fallback.title}${number !== undefined ? ` #${number}` : ""}`,
    body: first(field(item, "title"), field(item, "name"), firstLine(field(item, "body")), field(item, "tag_name")) ??
      `${sender ?? "Someone"}: ${event}${action !== undefined ? ` ${action}` : ""}`,
    url: first(field(item, "html_url"), field(v.repository, "html_url"))
  }, value, { strict: false })
}
