/**
 * The person's side of a page (ARCHITECTURE.md Person API): acknowledge stops
 * the escalation, escalate runs the next step at once.
 */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { OncallPage } from "../domain/Oncall.ts"
import { Conflict, NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { PageId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

export class PersonPagesGroup extends HttpApiGroup.make("pages")
  .add(
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
