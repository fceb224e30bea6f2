/**
 * `gitlab` (project and group webhooks, `X-Gitlab-Event`, `object_kind`): as
 * GitHub's, one line of title and the details in the body. A finished
 * pipeline is an alert of its project and ref: `failed` fires it (`high`),
 * the next `success` resolves it.
 */
import type { InboundRequest, Mapped, Refusal } from "./Inbound.ts"
import { field, finish, first, isRecord, lines, str } from "./Inbound.ts"

export const mapGitLab = (request: InboundRequest, value: unknown): Mapped | Refusal => {
  const v = isRecord(value) ? value : {}
  const kind = first(v.object_kind, v.event_name, request.headers["x-gitlab-event"]) ?? "event"
  const project = first(field(v.project, "path_with_namespace"), field(v.project, "name"), v.project_name, field(v.repository, "name")) ?? "GitLab"
  const attrs = isRecord(v.object_attributes) ? v.object_attributes : {}

  if (kind === "push" || kind === "tag_push") {
    const commits = (Array.isArray(v.commits) ? v.commits : []).filter(isRecord)
    const count = typeof v.total_commits_count === "number" ? v.total_commits_count : commits.length
    const ref = str(v.ref)?.replace(/^refs\/(heads|tags)\//, "") ?? "?"
    return finish("gitlab", {
      title: kind === "tag_push" ? `${project}: tag ${ref}` : `${project}: ${count} commit${count === 1 ? "" : "s"} to ${ref}`,
      body: lines(
        ...commits.slice(0, 5).map((c) => `• ${first(c.title, str(c.message)?.split("\n")[0]) ?? ""}${str(field(c.author, "name")) !== undefined ? ` (${str(field(c.author, "name"))})` : ""}`),
        count > 5 ? `… and ${count - 5} more` : undefined
      ) || `${first(v.user_name) ?? "Someone"} pushed ${ref}`,
      url: first(field(v.project, "web_url"), field(v.repository, "homepage"))
    }, value, { strict: false })
  }
  if (kind === "pipeline") {
    const status = str(attrs.status) ?? "?"
    const ref = str(attrs.ref)
    const failedJobs = (Array.isArray(v.builds) ? v.builds : []).filter(isRecord).filter((b) => b.status === "failed").map((b) => str(b.name))
    const done = status === "success" || status === "failed"
    return finish("gitlab", {
      title: `${project}: pipeline ${first(attrs.name, attrs.iid !== undefined ? `#${String(attrs.iid)}` : undefined) ?? ""} ${status}`.replace(/\s+/g, " "),
      body: lines(
        ref !== undefined ? `on ${ref}` : undefined,
        str(field(v.commit, "message"))?.split("\n")[0],
        failedJobs.length > 0 ? `failed: ${failedJobs.join(", ")}` : undefined
      ) || `pipeline ${status}`,
      url: first(attrs.url, field(v.project, "web_url")),
      priority: status === "failed" ? "high" : done ? "normal" : "low",
      alertKey: done ? `pipeline:${project}:${ref ?? ""}` : null,
      state: status === "failed" ? "firing" : status === "success" ? "resolved" : null
    }, value, { strict: false })
  }
  if (kind === "build") {
    return finish("gitlab", {
      title: `${project}: job ${first(v.build_name) ?? ""} ${first(v.build_status) ?? ""}`.replace(/\s+/g, " ").trim(),
      body: lines(first(v.ref), first(v.build_failure_reason)) || "job",
      priority: v.build_status === "failed" ? "high" : "low"
    }, value, { strict: false })
  }
  // Issues, merge requests, notes, releases, deployments and the rest.
  const action = first(attrs.action, v.action, v.status)
  const iid = str(attrs.iid)
  return finish("gitlab", {
    title: `${project}: ${kind.replace(/_/g, " ")}${iid !== undefined ? ` #${iid}` : ""}${action !== undefined ? ` ${action}` : ""}`,
    body: first(attrs.title, attrs.note, v.description, attrs.description, v.commit_title, v.name) ?? `${kind} ${action ?? ""}`.trim(),
    url: first(attrs.url, v.url, v.deployable_url, field(v.project, "web_url"))
  }, value, { strict: false })
}
