export * from "./domain/index.ts"
export * from "./errors.ts"
export * from "./Operation.ts"
export * from "./Params.ts"
export * from "./Security.ts"
export { AgentApi, AgentApiDescription, AgentApiTitle } from "./AgentApi.ts"
export { AppApi } from "./AppApi.ts"
export { ApiTokenList, TOKENS_LIST_LIMIT, TokensQuery } from "./agent/Tokens.ts"
export { DeviceList } from "./agent/Devices.ts"
export { CreateTokenRequest } from "./app/Tokens.ts"
export {
  PushToStartTokenRequest,
  RegisterDeviceRequest,
  RenameDeviceRequest,
  WEB_PUSH_ENDPOINT_MAX,
  WebPushKey,
  WebPushSubscription
} from "./app/Devices.ts"
export { HooksApi, InboundAccepted, InboundForm, InboundJson, InboundText, SenderJson } from "./HooksApi.ts"
export { BillingGroup } from "./agent/Billing.ts"
export { ActivityFeedQuery, EventList, EventsQuery, IntParam } from "./agent/History.ts"
export { InboxListQuery, ReadAllRequest, ReadAllResult } from "./agent/Inbox.ts"
export { CreateNotificationRequest, IdempotencyKey, ProjectId } from "./agent/Notifications.ts"
export { CreateServiceRequest, ServiceList, ShareServiceRequest, UpdateServiceRequest } from "./agent/Services.ts"
export { CreateInteractionRequest, InboxInteractionList, WaitQuery } from "./agent/Interactions.ts"
export { CreateWebhookRequest, ReplyWebhookList, ReplyWebhookWithDeliveries, UpdateWebhookRequest } from "./agent/Webhooks.ts"
export { AnswerRequest } from "./app/Interactions.ts"
export { ACTIVITY_TRANSITIONS, LiveActivityList, PropsPatch, StartActivityRequest, StartProps, UpdateActivityRequest } from "./agent/Activities.ts"
export {
  LiveActivityTextBudgets,
  PERSON_ACTIVITIES_LISTED,
  PersonLiveActivity,
  PersonLiveActivityList,
  UpdateTokenRequest
} from "./app/Activities.ts"
export { AppList, AppUpdated, CreateAppRequest, ShareAppRequest, UpdateAppRequest } from "./agent/Apps.ts"
export { AppPreferencesRequest } from "./app/Apps.ts"
export {
  MINI_APP_MAX_ARCHIVE_BYTES,
  MINI_APP_MAX_FILES_BYTES,
  MINI_APP_MAX_PACKAGES,
  MiniAppArchive,
  MiniAppArchiveFile,
  MiniAppPackageList,
  MiniAppsGroup,
  MiniAppSigningKey,
  MiniAppSigningKeyList
} from "./agent/MiniApps.ts"
export {
  MINI_APP_MAX_REPORTS,
  MINI_APP_OFFER_INTERVAL_SECONDS,
  MINI_APP_REPORT_DETAIL_MAX,
  MINI_APP_REPORT_REASON_MAX,
  MiniAppExport,
  MiniAppExportEntry,
  MiniAppOffer,
  MiniAppReport,
  MiniAppReportRequest,
  MiniAppReviewEntry,
  MiniAppReviewGroup,
  MiniAppReviewList
} from "./agent/MiniAppReview.ts"
export { AUDIT_CSV_MAX_ROWS, AuditGroup, AuditLogCsv, AuditLogQuery } from "./agent/Audit.ts"
export { CreateTeamRequest, RetentionDays, TeamList, UpdateMemberRequest, UpdateTeamRequest } from "./agent/Teams.ts"
export { DOMAIN_VERIFY_PER_MINUTE, EmailDomain, SetTeamDomainRequest } from "./agent/TeamDomain.ts"
export {
  CreateDeviceGroupRequest,
  DEVICE_GROUP_MAX_DEVICES,
  DEVICE_GROUP_MAX_MEMBERS,
  DeviceGroupList,
  TeamDevice,
  TeamDeviceList,
  UpdateDeviceGroupRequest
} from "./agent/DeviceGroups.ts"
export { CreateInviteRequest, INVITES_LISTED, InviteDomain, InviteEmail, TeamInviteList } from "./agent/TeamInvites.ts"
export { AcceptInviteRequest, InviteCode, InvitePreview } from "./app/Invites.ts"
export {
  INBOX_STREAM_PING_SECONDS,
  INBOX_STREAMS_PER_PERSON,
  InboxStreamEvent,
  InboxStreamItem,
  PersonInboxGroup,
  PersonReadAllRequest
} from "./app/Inbox.ts"
export { PersonTeamsGroup } from "./app/Teams.ts"
export { PersonOncall, PersonOncallGroup, PersonOncallGroupsGroup } from "./app/Oncall.ts"
export { MiniAppInstallView, MiniAppSignatureCheck, PersonMiniAppsGroup } from "./app/MiniApps.ts"
export { CreatePageRequest, DedupKey, PAGES_LISTED_DEFAULT, PagesGroup, PagesQuery } from "./agent/Pages.ts"
export { PERSON_PAGES_LISTED, PersonPageList, PersonPagesGroup, PersonPagesQuery } from "./app/Pages.ts"
export {
  CreateOncallGroupRequest,
  CreateOverrideRequest,
  EscalationStepInput,
  ONCALL_MAX_ESCALATION_MINUTES,
  ONCALL_MAX_ESCALATION_STEPS,
  ONCALL_MAX_GROUPS,
  ONCALL_MAX_OVERRIDE_DAYS,
  ONCALL_MAX_OVERRIDES,
  ONCALL_MAX_ROTATION_MEMBERS,
  OncallGroupList,
  OncallGroupRef,
  OncallGroupsGroup,
  OncallMe,
  OncallMyShift,
  OverrideId,
  RotationInput,
  UpdateOncallGroupRequest
} from "./agent/Oncall.ts"
export {
  CallbackAccess,
  CallbackAccessRequest,
  Connector,
  CONNECTOR_MAX_NAME,
  CONNECTOR_MAX_PATH_PREFIX,
  CONNECTOR_MAX_ROUTES,
  CONNECTOR_MAX_UPSTREAM,
  ConnectorAccess,
  ConnectorAccessRequest,
  ConnectorCreated,
  CONNECTOR_DELIVERIES_MAX,
  ConnectorDeliveriesQuery,
  ConnectorDelivery,
  ConnectorDeliveryList,
  ConnectorId,
  ConnectorList,
  ConnectorRoute,
  CONNECTORS_MAX_PER_PERSON,
  ConnectorsGroup,
  CreateConnectorRequest,
  UpdateConnectorRequest
} from "./agent/Connectors.ts"
export { ConnectorPass, PersonConnectorsGroup } from "./app/Connectors.ts"
export { connectorPathProblem, connectorUrlProblem } from "./domain/ConnectorPaths.ts"
export { TapUrl } from "./domain/Common.ts"
export {
  MuteRequest,
  PersonQuietHoursGroup,
  PutQuietHoursRequest,
  QUIET_MUTE_HOURS_MAX,
  QUIET_TIME_ZONE_MAX,
  QUIET_WINDOWS_MAX,
  QuietHours,
  QuietHoursState,
  QuietMode,
  QuietWindow,
  Weekday
} from "./app/QuietHours.ts"
export { PersonRemindersGroup, PutReminderDefaultsRequest, ReminderDefaults } from "./app/Reminders.ts"
export {
  EMAIL_FALLBACK_MAX_SECONDS,
  EMAIL_FALLBACK_MIN_SECONDS,
  EMAIL_VERIFICATION_EVERY_MINUTES,
  EmailChannel,
  EmailFallbackSeconds,
  PersonEmailChannelGroup,
  PutEmailChannelRequest
} from "./app/EmailChannel.ts"
export { OAuthApi, OAuthRequestErrors } from "./OAuthApi.ts"
export { OAuthAccessDenied, OAuthError, OAuthInvalidClient, OAuthInvalidToken, oauthError, OAuthTemporarilyUnavailable } from "./oauth/Errors.ts"
export type { OAuthErrorCode } from "./oauth/Errors.ts"
export { AuthorizationServerMetadata, OAuthMetadataGroup, ProtectedResourceMetadata } from "./oauth/Metadata.ts"
export {
  ClientRegistered,
  OAUTH_MAX_CLIENT_NAME,
  OAUTH_MAX_REDIRECT_URIS,
  OAUTH_MAX_REDIRECT_URIS_TOTAL,
  OAUTH_MAX_URI_LENGTH,
  OAuthClientsGroup,
  RegisterClientRequest,
  TokenEndpointAuthMethod
} from "./oauth/Clients.ts"
export { AuthorizeQuery, ConsentForm, OAuthAuthorizeGroup } from "./oauth/Authorize.ts"
export { OAuthTokensGroup, RevokeRequest, TokenRequest, TokenResponse } from "./oauth/Tokens.ts"
export { OAuthSignInGroup, SignInPage, SignInQuery, SignInToken } from "./oauth/SignIn.ts"
export {
  AuthGroup,
  AuthLinkQuery,
  AuthenticationResponseJson,
  ChallengeId,
  EmailLinkRequest,
  EmailLinkSent,
  PasskeyRequestOptions,
  PasskeySignInRequest,
  SIGN_IN_EMAIL_WINDOW_MINUTES,
  SIGN_IN_EMAILS_PER_WINDOW,
  SIGN_IN_LINK_MINUTES,
  SIGN_IN_NEXT_MAX,
  SignInNext
} from "./app/Auth.ts"
export {
  Passkey,
  PasskeyCreationOptions,
  PasskeyId,
  PasskeyList,
  PASSKEYS_MAX,
  PersonPasskeysGroup,
  RegisterPasskeyRequest,
  RegistrationResponseJson
} from "./app/Passkeys.ts"
export { PersonSessionsGroup, SessionId, SessionInfo, SessionList, SESSIONS_LISTED } from "./app/Sessions.ts"
