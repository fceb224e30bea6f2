import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { App } from "../domain/Apps.ts"
import { ImageUrl, Ok } from "../domain/Common.ts"
import { Conflict, Forbidden, LimitReached, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { AppId, TeamId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"
import { ProjectId } from "./Notifications.ts"

const AppName = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))

/** Body of POST /apps. */
export const CreateAppRequest = Schema.Struct({
  name: AppName,
  /** The app's http(s) URL (at most 2,048 characters); its origin + path identify the app. */
  url: ImageUrl,
  iconUrl: Schema.optionalKey(Schema.NullOr(ImageUrl)),
  projectId: Schema.optionalKey(Schema.NullOr(ProjectId))
}).annotate({ identifier: "CreateAppRequest" })
export type CreateAppRequest = typeof CreateAppRequest.Type

/** Body of PATCH /apps/{id}: the fields to change; `null` clears a nullable one. */
export const UpdateAppRequest = Schema.Struct({
  name: Schema.optionalKey(AppName),
  url: Schema.optionalKey(ImageUrl),
  iconUrl: Schema.optionalKey(Schema.NullOr(ImageUrl)),
  projectId: Schema.optionalKey(Schema.NullOr(ProjectId))
}).annotate({ identifier: "UpdateAppRequest" })
export type UpdateAppRequest = typeof UpdateAppRequest.Type

/** Body of POST /apps/{id}/share. */
export const ShareAppRequest = Schema.Struct({
  teamId: Schema.NullOr(TeamId),
  notify: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ShareAppRequest" })
export type ShareAppRequest = typeof ShareAppRequest.Type

export class AppList extends Schema.Class<AppList>("AppList")({
  items: Schema.Array(App)
}) {}

/** POST /apps of a URL the account already registered: that app, updated (status 200 where a new app is 201). */
export class AppUpdated extends App.extend<AppUpdated>("AppUpdated")({}) {}

const appFields = "`storageScope` is an opaque digest (base64url SHA-256) of the viewer, the app, its origin and the " +
  "viewer's membership generation in the app's team (a fixed marker for personal apps): it changes when the origin " +
  "changes or the viewer leaves and rejoins the team, and a change requires a fresh local partition. `shareName`, " +
  "`shareEmail`, `consentedAt` and `lastOpenedAt` are the calling account's own (false/null until set). " +
  "`createdBy` is who registered the app; `addedBy` who added it to its team (null for a personal app); " +
  "`projectName` is the project's name, which is its id (as in the inbox)."

export class AppsGroup extends HttpApiGroup.make("apps")
  .add(
    HttpApiEndpoint.get("list", "/apps", { success: AppList }).pipe(agentOperation({
      summary: "List web apps",
      description: "The apps the account added and the apps shared with every team or family it belongs to, newest " +
        "first (an app it added stays visible to it after it leaves that team, so it can take the app back). " +
        appFields,
      scopes: ["apps:read"]
    })),
    HttpApiEndpoint.post("create", "/apps", {
      payload: CreateAppRequest,
      success: [AppUpdated, App.pipe(HttpApiSchema.status(201))],
      error: LimitReached
    }).pipe(agentOperation({
      summary: "Register a web app",
      description: "Registers an http(s) web app (201). An app is identified by its URL's origin + path (query and " +
        "fragment aside): registering a URL the account already added updates that app's name, URL, icon and " +
        "project instead (200). An account adds at most 200 apps (422 `LIMIT_REACHED` with `limit`).",
      scopes: ["apps:write"]
    })),
    HttpApiEndpoint.get("get", "/apps/:id", { params: { id: AppId }, success: App, error: NotFound })
      .pipe(agentOperation({
        summary: "Get a web app",
        description: "One App the account added or can see through a team or family; any other answers 404. " +
          appFields,
        scopes: ["apps:read"]
      })),
    HttpApiEndpoint.patch("update", "/apps/:id", {
      params: { id: AppId },
      payload: UpdateAppRequest,
      success: App,
      error: [NotFound, Forbidden, Conflict]
    }).pipe(agentOperation({
      summary: "Update a web app",
      description: "Updates name, URL, icon or project. Moving the URL to a new origin clears every viewer's " +
        "sign-in consent and changes `storageScope`. Name/email disclosure preferences and sign-in consent cannot be " +
        "changed here (they are each person's own, through the Person API). Only the person who added the app may " +
        "update it (others who can see it: 403 `FORBIDDEN`; others: 404). A URL whose origin + path another of the " +
        "account's apps already has: 409 `CONFLICT`.",
      scopes: ["apps:write"]
    })),
    HttpApiEndpoint.delete("remove", "/apps/:id", { params: { id: AppId }, success: Ok, error: [NotFound, Forbidden] })
      .pipe(agentOperation({
        summary: "Delete a web app",
        description: "Removes the app, with every viewer's consent and preferences; notifications and inbox items " +
          "naming it then show `app: null`. Only the person who added it may delete it (others who can see it: 403 " +
          "`FORBIDDEN`; others: 404).",
        scopes: ["apps:write"]
      })),
    HttpApiEndpoint.post("revoke", "/apps/:id/revoke", { params: { id: AppId }, success: App, error: NotFound })
      .pipe(agentOperation({
        summary: "Revoke this account's sign-in consent",
        description: "Clears the calling account's sign-in consent for the app (approval is asked again on next " +
          "open); other viewers keep theirs. Agents cannot grant consent or issue passes. Any app the account can " +
          "see; others: 404.",
        scopes: ["apps:write"]
      })),
    HttpApiEndpoint.post("share", "/apps/:id/share", {
      params: { id: AppId },
      payload: ShareAppRequest,
      success: App,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Share a web app with a team or family, or take it back",
      description: "`teamId` moves the app into that team or family (the caller must be a member, else 404); `null` " +
        "moves it back to the caller's own apps. Only the person who added the app may move it (others who can see " +
        "it: 403 `FORBIDDEN`). With `notify` (default true) the team's other members are told by a push and an " +
        "inbox item naming the app. Each member approves sign-in for themselves. Written to the audit log as " +
        "`app.shared` on the team it joins and `app.unshared` on the team it leaves.",
      scopes: ["apps:write"]
    })),
    HttpApiEndpoint.get("teamApps", "/teams/:id/apps", { params: { id: TeamId }, success: AppList, error: NotFound })
      .pipe(agentOperation({
        summary: "A team's shared web apps",
        description: "The apps shared with the team or family, newest first; any member may read them. A non-member " +
          "(or no such team): 404. " + appFields,
        scopes: ["teams:read", "apps:read"]
      }))
  )
  .middleware(AgentAuth)
{}
