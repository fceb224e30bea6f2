/**
 * The numbered migrations, in order. Never renumber or insert below the latest
 * id: the migrator runs only ids above the newest applied one.
 */
import { Migrator } from "effect/sql"
import m0001 from "./0001_identity.ts"
import m0002 from "./0002_messaging.ts"
import m0003 from "./0003_outbox_nodes.ts"
import m0004 from "./0004_prompts.ts"
import m0005 from "./0005_activity_claims.ts"
import m0006 from "./0006_receipts_outlive_devices.ts"
import m0007 from "./0007_activity_update_wait.ts"
import m0008 from "./0008_reply_attempt_started.ts"
import m0009 from "./0009_teams.ts"
import m0010 from "./0010_oncall.ts"
import m0011 from "./0011_mini_apps.ts"
import m0012 from "./0012_connectors.ts"
import m0013 from "./0013_oauth.ts"
import m0014 from "./0014_oauth_client_trust.ts"
import m0015 from "./0015_push_queue.ts"
import m0016 from "./0016_queue_tables_upkeep.ts"
import m0017 from "./0017_push_message_in_queue.ts"
import m0018 from "./0018_web_push.ts"
import m0019 from "./0019_sign_in.ts"
import m0020 from "./0020_console_reads.ts"
import m0021 from "./0021_shared_limits.ts"
import m0022 from "./0022_mcp_sessions.ts"
import m0023 from "./0023_inbound_formats.ts"
import m0024 from "./0024_prompt_outcomes.ts"
import m0025 from "./0025_quiet_hours.ts"
import m0026 from "./0026_email_channel.ts"
import m0027 from "./0027_delivery_watch.ts"

export const loader = Migrator.fromRecord({
  "0001_identity": m0001,
  "0002_messaging": m0002,
  "0003_outbox_nodes": m0003,
  "0004_prompts": m0004,
  "0005_activity_claims": m0005,
  "0006_receipts_outlive_devices": m0006,
  "0007_activity_update_wait": m0007,
  "0008_reply_attempt_started": m0008,
  "0009_teams": m0009,
  "0010_oncall": m0010,
  "0011_mini_apps": m0011,
  "0012_connectors": m0012,
  "0013_oauth": m0013,
  "0014_oauth_client_trust": m0014,
  "0015_push_queue": m0015,
  "0016_queue_tables_upkeep": m0016,
  "0017_push_message_in_queue": m0017,
  "0018_web_push": m0018,
  "0019_sign_in": m0019,
  "0020_console_reads": m0020,
  "0021_shared_limits": m0021,
  "0022_mcp_sessions": m0022,
  "0023_inbound_formats": m0023,
  "0024_prompt_outcomes": m0024,
  "0025_quiet_hours": m0025,
  "0026_email_channel": m0026,
  "0027_delivery_watch": m0027
})
