import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { Device } from "../domain/Identity.ts"
import { NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { AgentAuth } from "../Security.ts"
import { DeviceId } from "../Params.ts"

export class DeviceList extends Schema.Class<DeviceList>("DeviceList")({
  items: Schema.Array(Device)
}) {}

export class DevicesGroup extends HttpApiGroup.make("devices")
  .add(
    HttpApiEndpoint.get("list", "/devices", { success: DeviceList }).pipe(agentOperation({
      summary: "List the account's devices",
      description: "Lists the account's Device records, newest first, inactive ones included (`active: false` after the " +
        "push provider reported the device gone for good).",
      scopes: ["devices:read"]
    })),
    HttpApiEndpoint.delete("remove", "/devices/:id", { params: { id: DeviceId }, success: Ok, error: NotFound }).pipe(
      agentOperation({
        summary: "Remove a device",
        description: "Removes a device; it registers again when the phone app next opens. Another account's device " +
          "answers 404 exactly like a missing one.",
        scopes: ["devices:write"]
      })
    )
  )
  .middleware(AgentAuth)
{}
