/**
 * The person's on-call view in the console: for every on-call group of their
 * teams and families who is on call now and next, their own coming shifts,
 * and the open pages that paged them — one read for the whole page.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { OncallGroup, OncallPage } from "../domain/Oncall.ts"
import { OncallMyShift } from "../agent/Oncall.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"

/** An on-call group with the name of its team or family. */
export class PersonOncallGroup extends OncallGroup.extend<PersonOncallGroup>("PersonOncallGroup")({
  teamName: Schema.String
}) {}

/** PersonOncall: GET /api/app/oncall. */
export class PersonOncall extends Schema.Class<PersonOncall>("PersonOncall")({
  /** Every on-call group of the person's teams and families, newest first. */
  groups: Schema.Array(PersonOncallGroup),
  /** The person's own shifts, soonest first (the one covering now included; at most 5 per group). */
  shifts: Schema.Array(OncallMyShift),
  /** Open pages that paged the person, newest first. */
  pages: Schema.Array(OncallPage)
}) {}

export class PersonOncallGroupsGroup extends HttpApiGroup.make("oncall")
  .add(
    HttpApiEndpoint.get("get", "/oncall", { success: PersonOncall }).pipe(personOperation({
      summary: "Who is on call",
      description: "For every on-call group of the person's teams and families: who is on call now (`current`, null " +
        "when nobody) and the next 5 shifts (`upcoming`), with their times, overrides winning for their window; the " +
        "person's own shifts across all groups, soonest first; and the open pages that paged them, newest first " +
        "(acknowledge or escalate them with POST /pages/{id}/acknowledge, …/escalate)."
    }))
  )
  .middleware(PersonAuth)
{}
