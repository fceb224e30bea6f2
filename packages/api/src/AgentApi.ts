/**
 * The Scoped Agent API (`/api/agent`): the single definition the server, the
 * typed client and the OpenAPI document are derived from.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { ActivitiesGroup } from "./agent/Activities.ts"
import { AppsGroup } from "./agent/Apps.ts"
import { AuditGroup } from "./agent/Audit.ts"
import { AuthGroup } from "./agent/Auth.ts"
import { BillingGroup } from "./agent/Billing.ts"
import { ConnectorsGroup } from "./agent/Connectors.ts"
import { DeviceGroupsGroup } from "./agent/DeviceGroups.ts"
import { DevicesGroup } from "./agent/Devices.ts"
import { HistoryGroup } from "./agent/History.ts"
import { MiniAppReviewGroup } from "./agent/MiniAppReview.ts"
import { MiniAppsGroup } from "./agent/MiniApps.ts"
import { NotificationsGroup } from "./agent/Notifications.ts"
import { OncallGroupsGroup } from "./agent/Oncall.ts"
import { PagesGroup } from "./agent/Pages.ts"
import { ServicesGroup } from "./agent/Services.ts"
import { TeamsGroup } from "./agent/Teams.ts"
import { TeamDomainGroup } from "./agent/TeamDomain.ts"
import { TeamInvitesGroup } from "./agent/TeamInvites.ts"
import { InboxGroup } from "./agent/Inbox.ts"
import { InteractionsGroup } from "./agent/Interactions.ts"
import { WebhooksGroup } from "./agent/Webhooks.ts"
import { TokensGroup } from "./agent/Tokens.ts"
import { errorSchemasAsSent } from "./errors.ts"
import { RequestErrors } from "./Security.ts"

export const AgentApiTitle = "Scoped Agent API"
export const AgentApiDescription =
  "A scoped bearer-token HTTP API for agents and scripts. Every request acts as the account that owns the token and " +
  "needs the scopes listed for the operation plus the operation's ownership, membership and role checks. Errors " +
  "answer `{error, code, issues?, required?}` with a stable machine `code`."

export class AgentApi extends HttpApi.make("agent")
  .add(AuthGroup)
  .add(TokensGroup)
  .add(DevicesGroup)
  .add(ServicesGroup)
  .add(WebhooksGroup)
  .add(HistoryGroup)
  .add(NotificationsGroup)
  .add(InteractionsGroup)
  .add(ActivitiesGroup)
  .add(InboxGroup)
  .add(BillingGroup)
  .add(TeamsGroup)
  .add(TeamInvitesGroup)
  .add(TeamDomainGroup)
  .add(AppsGroup)
  .add(DeviceGroupsGroup)
  .add(AuditGroup)
  .add(OncallGroupsGroup)
  .add(PagesGroup)
  .add(MiniAppsGroup)
  .add(MiniAppReviewGroup)
  .add(ConnectorsGroup)
  .middleware(RequestErrors)
  // decisions.md: unknown body fields are rejected; all issues are reported at once.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  // Responses are built from values the server already validated (decoded rows,
  // checked input): re-running every field's checks on the way out roughly
  // halved throughput. Types and structure are still enforced both ways.
  .annotate(HttpApi.SuccessParseOptions, { disableChecks: true })
  .prefix("/api/agent")
  .annotateMerge(OpenApi.annotations({
    title: AgentApiTitle,
    version: "1.0.0",
    transform: errorSchemasAsSent,
    description: AgentApiDescription
  }))
{}
