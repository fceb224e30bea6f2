/**
 * The notifications floors' tables and statements (notifications-floor.ts in
 * raw node:http + raw pg, notifications-effect-floor.ts on Effect's HttpApi
 * and sql-pg): one text for both, so they do the same database work and
 * differ only in the stack. Parameters are positional (`$1`…).
 */

export const floorToken = "floor-token"
export const floorUserId = "usr_floor"

/** Fresh tables with only the indexes the work needs, and the account's three devices (one statement each). */
export const floorSetup = [
  "DROP TABLE IF EXISTS floor_deliveries, floor_receipts, floor_notifications, floor_devices",
  `CREATE TABLE floor_devices (
    id text PRIMARY KEY, user_id text NOT NULL, platform text NOT NULL, push_token text NOT NULL, active boolean NOT NULL)`,
  "CREATE INDEX floor_devices_user ON floor_devices (user_id)",
  `CREATE TABLE floor_notifications (
    id text PRIMARY KEY, user_id text NOT NULL, title text NOT NULL, body text NOT NULL, url text,
    created_at timestamptz NOT NULL DEFAULT now())`,
  `CREATE TABLE floor_receipts (
    id text PRIMARY KEY, item_id text NOT NULL, device_id text NOT NULL, message jsonb NOT NULL,
    status text NOT NULL DEFAULT 'pending', attempts int NOT NULL DEFAULT 0, claimed_at timestamptz,
    provider_id text, next_attempt_at timestamptz NOT NULL DEFAULT now(), created_at timestamptz NOT NULL DEFAULT now())`,
  "CREATE INDEX floor_receipts_due ON floor_receipts (next_attempt_at) WHERE status = 'pending'",
  `CREATE TABLE floor_deliveries (
    id text PRIMARY KEY, device_id text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  "CREATE INDEX floor_deliveries_device ON floor_deliveries (device_id, id)",
  `INSERT INTO floor_devices VALUES
    ('dev_floor_1', '${floorUserId}', 'ios', 'floor-1', true),
    ('dev_floor_2', '${floorUserId}', 'ios', 'floor-2', true),
    ('dev_floor_3', '${floorUserId}', 'android', 'floor-3', true)`
]

export const floorSql = {
  /** $1: user ids. */
  devices: "SELECT id, user_id, platform FROM floor_devices WHERE user_id = ANY($1::text[]) AND active ORDER BY id",
  /** $1: notifications [{id, title, body, url}], $2: receipts [{id, item_id, device_id, message}] (JSON), $3: the user. */
  commit: `WITH n AS (
       INSERT INTO floor_notifications (id, user_id, title, body, url)
       SELECT id, $3, title, body, url FROM jsonb_to_recordset($1::jsonb) AS r(id text, title text, body text, url text))
     INSERT INTO floor_receipts (id, item_id, device_id, message)
     SELECT id, item_id, device_id, message FROM jsonb_to_recordset($2::jsonb) AS r(id text, item_id text, device_id text, message jsonb)`,
  /** $1: receipt ids. */
  claim: `UPDATE floor_receipts SET status = 'sending', claimed_at = now(), attempts = attempts + 1
     WHERE id = ANY($1::text[]) AND status = 'pending' RETURNING id, item_id, device_id, message`,
  /** $1: deliveries [{id, device_id, payload}] (JSON). */
  deliver: `INSERT INTO floor_deliveries (id, device_id, payload)
     SELECT id, device_id, payload FROM jsonb_to_recordset($1::jsonb) AS d(id text, device_id text, payload jsonb)`,
  /** $1: answers [{id, provider_id}] (JSON), $2: their ids. */
  record: `UPDATE floor_receipts r SET status = 'accepted', provider_id = v.provider_id, claimed_at = NULL
     FROM jsonb_to_recordset($1::jsonb) AS v(id text, provider_id text)
     WHERE r.id = v.id AND r.id = ANY($2::text[]) AND r.status = 'sending'`
} as const

/** The alert each receipt carries, as the floors build it. */
export const floorMessage = (draft: { readonly id: string; readonly title: string; readonly body: string; readonly url: string | null }) => ({
  aps: { alert: { title: draft.title, body: draft.body }, "thread-id": draft.id },
  url: draft.url
})
