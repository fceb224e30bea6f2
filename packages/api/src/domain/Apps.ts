/** Records of web apps an account registers (and may share with a team or family). */
import { Schema } from "effect"
import { Timestamp } from "./Common.ts"
import { TeamSummary } from "./Teams.ts"

/** AppSummary: a web app as other records mention it; id `app_…`. */
export class AppSummary extends Schema.Class<AppSummary>("AppSummary")({
  id: Schema.String,
  name: Schema.String,
  origin: Schema.String,
  iconUrl: Schema.NullOr(Schema.String)
}) {}

/** App: a registered web app with the caller's sharing and sign-in consent state. */
export class App extends AppSummary.extend<App>("App")({
  /**
   * Opaque browser-storage generation scoped to viewer, app, origin and workspace membership;
   * a change requires a fresh local partition.
   */
  storageScope: Schema.String,
  url: Schema.String,
  projectId: Schema.NullOr(Schema.String),
  projectName: Schema.NullOr(Schema.String),
  shareName: Schema.Boolean,
  shareEmail: Schema.Boolean,
  consentedAt: Schema.NullOr(Timestamp),
  lastOpenedAt: Schema.NullOr(Timestamp),
  createdBy: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  /** Null for personal apps; the sharing/consent fields then describe the calling account only. */
  team: Schema.NullOr(TeamSummary),
  addedBy: Schema.NullOr(Schema.String)
}) {}
