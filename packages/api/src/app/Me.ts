import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Person } from "../domain/Identity.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"

export class MeGroup extends HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("get", "/me", { success: Person }).pipe(personOperation({
      summary: "The signed-in person",
      description: "Returns `{id, email, name}` of the person the session belongs to."
    }))
  )
  .middleware(PersonAuth)
{}
