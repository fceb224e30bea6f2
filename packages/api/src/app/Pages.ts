/**
 * The person's side of a page (ARCHITECTURE.md Person API): acknowledge stops
 * the escalation, escalate runs the next step at once.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { OncallPage } from "../domain/Oncall.ts"
import { IntParam } from "../agent/History.ts"
import { Conflict, NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { PageId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** Query of GET /api/app/pages: `open` (not resolved; the default), or one open status. */
export const PersonPagesQuery = Schema.Struct({
  status: Schema.optionalKey(Schema.Literals(["open", "triggered", "acknowledged"])),
  limit: Schema.optionalKey(IntParam(1, 100))
}).annotate({ identifier: "PersonPagesQuery" })
export type PersonPagesQuery = typeof PersonPagesQuery.Type

export class PersonPageList extends Schema.Class<PersonPageList>("PersonPageList")({
  items: Schema.Array(OncallPage)
}) {}

/** The default `limit` of GET /api/app/pages. */
export const PERSON_PAGES_LISTED = 50

export class PersonPagesGroup extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.get("list", "/pages", { query: PersonPagesQuery, success: PersonPageList }).pipe(personOperation({
      summary: "Open pages I can act on",
      description: "The pages not yet resolved of every team and family the person belongs to (any member may " +
        "acknowledge or escalate them), newest first: `status` `open` (the default: triggered or acknowledged), " +
        `\`triggered\` or \`acknowledged\`; \`limit\` 1–100 (default ${PERSON_PAGES_LISTED}). \`notified\` tells ` +
        "whether the person was paged. A team's resolved pages are the Agent API's `GET /teams/{id}/pages`."
    })),
    HttpApiEndpoint.post("acknowledge", "/pages/:id/acknowledge", {
      params: { id: PageId },
      success: OncallPage,
      error: [NotFound, Conflict]
    }).pipe(personOperation({
      summary: "Acknowledge a page",
      description: "Takes the page (`acknowledged`, `acknowledgedAt`, `acknowledgedBy`): no further escalation step " +
        "runs. Any member of the page's team may acknowledge it (anyone else: 404). Acknowledging an acknowledged " +
        "page answers it unchanged; a resolved page answers 409 `CONFLICT`. Written to the team's audit log " +
        "(`page.acknowledged`)."
    })),
    HttpApiEndpoint.post("escalate", "/pages/:id/escalate", {
      params: { id: PageId },
      success: OncallPage,
      error: [NotFound, Conflict]
    }).pipe(personOperation({
      summary: "Escalate a page now",
      description: "Runs the page's next escalation step at once instead of at its time (its own timer then finds it " +
        "done). Any member of the page's team may escalate it (anyone else: 404). A page that is not `triggered` " +
        "(acknowledged or resolved), or that has no step left, answers 409 `CONFLICT`. Written to the team's audit " +
        "log (`page.escalated`)."
    }))
  )
  .middleware(PersonAuth)
{}
