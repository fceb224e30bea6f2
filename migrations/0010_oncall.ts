/**
 * On-call: groups of a team with their rotation (members in order) and
 * escalation steps, overrides, and pages with who each step notified.
 *
 * Rotation members and overrides reference the team membership: a person who
 * leaves the team drops out of its rotations and overrides. A page outlives
 * its group (the group's name is copied) so history stays readable.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE oncall_groups (
      id text PRIMARY KEY,
      team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
      name text NOT NULL,
      period text NOT NULL CHECK (period IN ('daily', 'weekly')),
      handoff_at text NOT NULL,
      timezone text NOT NULL,
      starts_at timestamptz NOT NULL,
      escalation jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX oncall_groups_team_idx ON oncall_groups (team_id, id DESC)`

  yield* sql`
    CREATE TABLE oncall_group_members (
      group_id text NOT NULL REFERENCES oncall_groups (id) ON DELETE CASCADE,
      position integer NOT NULL,
      team_id text NOT NULL,
      user_id text NOT NULL,
      PRIMARY KEY (group_id, position),
      FOREIGN KEY (team_id, user_id) REFERENCES team_members (team_id, user_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX oncall_group_members_member_idx ON oncall_group_members (team_id, user_id)`

  yield* sql`
    CREATE TABLE oncall_overrides (
      id text PRIMARY KEY,
      group_id text NOT NULL REFERENCES oncall_groups (id) ON DELETE CASCADE,
      team_id text NOT NULL,
      user_id text NOT NULL,
      starts_at timestamptz NOT NULL,
      ends_at timestamptz NOT NULL,
      created_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (ends_at > starts_at),
      FOREIGN KEY (team_id, user_id) REFERENCES team_members (team_id, user_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX oncall_overrides_group_idx ON oncall_overrides (group_id, ends_at)`
  yield* sql`CREATE INDEX oncall_overrides_member_idx ON oncall_overrides (team_id, user_id)`

  // `step` is how many escalation steps have run (0: only the on-call person was paged).
  yield* sql`
    CREATE TABLE pages (
      id text PRIMARY KEY,
      team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
      group_id text REFERENCES oncall_groups (id) ON DELETE SET NULL,
      group_name text NOT NULL,
      title text NOT NULL,
      body text,
      url text,
      app_id text,
      status text NOT NULL DEFAULT 'triggered' CHECK (status IN ('triggered', 'acknowledged', 'resolved')),
      dedup_key text,
      repeat_count integer NOT NULL DEFAULT 0,
      step integer NOT NULL DEFAULT 0,
      created_by text,
      token_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      acknowledged_at timestamptz,
      acknowledged_by text,
      resolved_at timestamptz,
      resolved_by text
    )`
  // decisions.md: an open page with the same dedup key absorbs a new one — one open page per key and group.
  yield* sql`CREATE UNIQUE INDEX pages_open_dedup_key ON pages (group_id, dedup_key) WHERE status <> 'resolved' AND dedup_key IS NOT NULL`
  yield* sql`CREATE INDEX pages_team_idx ON pages (team_id, id DESC)`
  yield* sql`CREATE INDEX pages_group_open_idx ON pages (group_id) WHERE status <> 'resolved'`

  // Who each step paged: one row per person and step, so a step re-run after a crash pages nobody twice.
  yield* sql`
    CREATE TABLE page_notified (
      page_id text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
      user_id text NOT NULL,
      step integer NOT NULL,
      at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (page_id, user_id, step)
    )`
  yield* sql`CREATE INDEX page_notified_user_idx ON page_notified (user_id)`

  // A page is filed in each paged person's inbox and pushed through the outbox: both name it as their origin.
  yield* sql`ALTER TABLE push_receipts DROP CONSTRAINT push_receipts_origin_check`
  yield* sql`ALTER TABLE push_receipts ADD CONSTRAINT push_receipts_origin_check
    CHECK (origin IN ('event', 'notification', 'interaction', 'page'))`
  yield* sql`ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_origin_check`
  yield* sql`ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_origin_check
    CHECK (origin IN ('event', 'notification', 'interaction', 'page'))`
})
