/**
 * The Person API (`/api/app`): what the phone app and a signed-in person use for
 * the human-only actions the agent API deliberately lacks.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { PersonActivitiesGroup } from "./app/Activities.ts"
import { AuthGroup } from "./app/Auth.ts"
import { PersonPasskeysGroup } from "./app/Passkeys.ts"
import { PersonSessionsGroup } from "./app/Sessions.ts"
import { PersonAppsGroup } from "./app/Apps.ts"
import { PersonConnectorsGroup } from "./app/Connectors.ts"
import { PersonInvitesGroup } from "./app/Invites.ts"
import { PersonDevicesGroup } from "./app/Devices.ts"
import { PersonInteractionsGroup } from "./app/Interactions.ts"
import { MeGroup } from "./app/Me.ts"
import { PersonPagesGroup } from "./app/Pages.ts"
import { PersonTokensGroup } from "./app/Tokens.ts"
import { PersonInboxGroup } from "./app/Inbox.ts"
import { PersonTeamsGroup } from "./app/Teams.ts"
import { PersonOncallGroupsGroup } from "./app/Oncall.ts"
import { PersonMiniAppsGroup } from "./app/MiniApps.ts"
import { PersonQuietHoursGroup } from "./app/QuietHours.ts"
import { PersonRemindersGroup } from "./app/Reminders.ts"
import { PersonEmailChannelGroup } from "./app/EmailChannel.ts"
import { errorSchemasAsSent } from "./errors.ts"
import { RequestErrors } from "./Security.ts"

export class AppApi extends HttpApi.make("app")
  .add(MeGroup)
  .add(PersonTokensGroup)
  .add(PersonDevicesGroup)
  .add(PersonInteractionsGroup)
  .add(PersonActivitiesGroup)
  .add(PersonInvitesGroup)
  .add(PersonAppsGroup)
  .add(PersonPagesGroup)
  .add(PersonConnectorsGroup)
  .add(PersonInboxGroup)
  .add(PersonTeamsGroup)
  .add(PersonOncallGroupsGroup)
  .add(PersonMiniAppsGroup)
  .add(PersonQuietHoursGroup)
  .add(PersonRemindersGroup)
  .add(PersonEmailChannelGroup)
  .add(AuthGroup)
  .add(PersonPasskeysGroup)
  .add(PersonSessionsGroup)
  .middleware(RequestErrors)
  // decisions.md: unknown body fields are rejected; all issues are reported at once.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  // Responses are built from values the server already validated (decoded rows,
  // checked input): re-running every field's checks on the way out roughly
  // halved throughput. Types and structure are still enforced both ways.
  .annotate(HttpApi.SuccessParseOptions, { disableChecks: true })
  .prefix("/api/app")
  .annotateMerge(OpenApi.annotations({
    title: "Herald Person API",
    version: "1.0.0",
    transform: errorSchemasAsSent,
    description: "What the phone app and a signed-in person use: the human-only actions (creating API tokens, " +
      "registering devices, answering prompts) that the Scoped Agent API deliberately lacks. Bearer session tokens."
  }))
{}
