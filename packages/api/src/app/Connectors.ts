/** The person's side of tunnel connectors (ARCHITECTURE.md Person API): one-time gateway passes. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Schema } from "effect"
import { ConnectorId } from "../agent/Connectors.ts"
import { Timestamp } from "../domain/Common.ts"
import { NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"

export class ConnectorPass extends Schema.Class<ConnectorPass>("ConnectorPass")({
  pass: Schema.String,
  expiresAt: Timestamp
}) {}

export class PersonConnectorsGroup extends HttpApiGroup.make("connectors")
  .add(
    HttpApiEndpoint.post("issuePass", "/connectors/:id/passes", {
      params: { id: ConnectorId },
      success: ConnectorPass.pipe(HttpApiSchema.status(201)),
      error: NotFound
    }).pipe(personOperation({
      summary: "Issue a gateway pass",
      description: "A one-time pass (`hcp_…`, valid 60 s) that the connector's gateway exchanges through " +
        "`POST /connectors/{id}/access` for a 12-hour session bound to the connector and this person. The connector's " +
        "owner may ask, and, when the connector names an on-call group, every member of that group's team or family. " +
        "Anyone else gets 404, as for a connector that does not exist.",
      secret: true
    }))
  )
  .middleware(PersonAuth)
{}
