/** The person's side of web apps: the apps they can open, their own sign-in consent and disclosure choices. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { App } from "../domain/Apps.ts"
import { NotFound } from "../errors.ts"
import { AppList } from "../agent/Apps.ts"
import { personOperation } from "../Operation.ts"
import { AppId } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** Body of PATCH /api/app/apps/{id}/preferences: the person's own name/email disclosure for the app. */
export const AppPreferencesRequest = Schema.Struct({
  shareName: Schema.optionalKey(Schema.Boolean),
  shareEmail: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "AppPreferencesRequest" })
export type AppPreferencesRequest = typeof AppPreferencesRequest.Type

export class PersonAppsGroup extends HttpApiGroup.make("apps")
  .add(
    HttpApiEndpoint.get("list", "/apps", { success: AppList }).pipe(personOperation({
      summary: "My web apps",
      description: "The apps the person added and those shared with every team or family they belong to, newest " +
        "first, each with the person's own sign-in consent (`consentedAt`, null: not approved yet — an app offered " +
        "to them) and disclosure choices (`shareName`, `shareEmail`)."
    })),
    HttpApiEndpoint.get("get", "/apps/:id", { params: { id: AppId }, success: App, error: NotFound }).pipe(personOperation({
      summary: "One web app",
      description: "An app the person added or can see through a team or family, as they see it; any other answers 404."
    })),
    HttpApiEndpoint.post("consent", "/apps/:id/consent", { params: { id: AppId }, success: App, error: NotFound })
      .pipe(personOperation({
        summary: "Approve sign-in to a web app",
        description: "Grants the signed-in person's own sign-in consent for the app (`consentedAt` = now); each " +
          "member of a team approves for themselves. Moving the app to a new origin clears it. Any app the person " +
          "can see (their own, or shared with a team or family they belong to); others: 404. Answers the App as " +
          "the person sees it."
      })),
    HttpApiEndpoint.patch("preferences", "/apps/:id/preferences", {
      params: { id: AppId },
      payload: AppPreferencesRequest,
      success: App,
      error: NotFound
    }).pipe(personOperation({
      summary: "Set name and e-mail disclosure for a web app",
      description: "Sets whether the app may learn the person's name (`shareName`) and e-mail (`shareEmail`); " +
        "fields left out keep their value. The person's own choice: other viewers are not affected. Any app the " +
        "person can see; others: 404. Answers the App as the person sees it."
    }))
  )
  .middleware(PersonAuth)
{}
