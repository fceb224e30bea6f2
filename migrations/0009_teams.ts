/**
 * Teams and families, and web apps: members and their roles, invites (join
 * codes stored hashed), device groups, the verified email domain, the audit
 * log, and apps with each person's sign-in consent and disclosure choices.
 *
 * Cascades carry the spec's rules: a member who leaves drops out of the
 * team's device groups; a deleted team's apps go back to the people who added
 * them (`apps.team_id` SET NULL) and its shared services back to their
 * creators (`services.family_id` SET NULL).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE teams (
      id text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('family', 'team')),
      plan text NOT NULL CHECK (plan IN ('free', 'team')),
      name text NOT NULL,
      auto_join_verified_domain boolean NOT NULL DEFAULT false,
      retention_days integer CHECK (retention_days BETWEEN 1 AND 3650),
      pending_domain text,
      domain_token text,
      verified_domain text,
      domain_verified_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  // decisions.md: a verified domain belongs to one team at most.
  yield* sql`CREATE UNIQUE INDEX teams_verified_domain_key ON teams (lower(verified_domain)) WHERE verified_domain IS NOT NULL`

  // `joined_at` is also the membership's generation: leaving and joining again gives a new one
  // (apps' `storageScope` digests it).
  yield* sql`
    CREATE TABLE team_members (
      team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (team_id, user_id)
    )`
  yield* sql`CREATE UNIQUE INDEX team_members_one_owner ON team_members (team_id) WHERE role = 'owner'`
  yield* sql`CREATE INDEX team_members_user_idx ON team_members (user_id)`

  yield* sql`
    CREATE TABLE team_invites (
      id text PRIMARY KEY,
      team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
      code_hash text NOT NULL UNIQUE,
      email text,
      domain text,
      role text NOT NULL CHECK (role IN ('admin', 'member')),
      invited_by text NOT NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      accepted_by text REFERENCES users (id) ON DELETE SET NULL,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((email IS NULL) <> (domain IS NULL))
    )`
  yield* sql`CREATE INDEX team_invites_team_idx ON team_invites (team_id, id DESC)`

  yield* sql`
    CREATE TABLE device_groups (
      id text PRIMARY KEY,
      team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX device_groups_team_idx ON device_groups (team_id, id DESC)`
  // Both lists reference the membership: a person who leaves drops out of every group of the team.
  yield* sql`
    CREATE TABLE device_group_members (
      group_id text NOT NULL REFERENCES device_groups (id) ON DELETE CASCADE,
      team_id text NOT NULL,
      user_id text NOT NULL,
      PRIMARY KEY (group_id, user_id),
      FOREIGN KEY (team_id, user_id) REFERENCES team_members (team_id, user_id) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE device_group_devices (
      group_id text NOT NULL REFERENCES device_groups (id) ON DELETE CASCADE,
      team_id text NOT NULL,
      user_id text NOT NULL,
      device_id text NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      PRIMARY KEY (group_id, device_id),
      FOREIGN KEY (team_id, user_id) REFERENCES team_members (team_id, user_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX device_group_members_member_idx ON device_group_members (team_id, user_id)`
  yield* sql`CREATE INDEX device_group_devices_member_idx ON device_group_devices (team_id, user_id)`
  yield* sql`CREATE INDEX device_group_devices_device_idx ON device_group_devices (device_id)`

  // The actor's name is copied: the entry must still say who acted after they leave.
  yield* sql`
    CREATE TABLE team_audit (
      id text PRIMARY KEY,
      team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
      actor_user_id text,
      actor_name text,
      actor_token_id text,
      action text NOT NULL,
      target_type text,
      target_id text,
      metadata jsonb,
      ip text,
      user_agent text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`
  yield* sql`CREATE INDEX team_audit_team_idx ON team_audit (team_id, created_at DESC, id DESC)`

  // `url_key` (origin + path) is what "an existing URL is updated" matches on, per person who added it.
  yield* sql`
    CREATE TABLE apps (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      team_id text REFERENCES teams (id) ON DELETE SET NULL,
      name text NOT NULL,
      url text NOT NULL,
      origin text NOT NULL,
      url_key text NOT NULL,
      icon_url text,
      project_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX apps_user_url_key ON apps (user_id, url_key)`
  yield* sql`CREATE INDEX apps_team_idx ON apps (team_id) WHERE team_id IS NOT NULL`

  // Each viewer's own sign-in consent and name/email disclosure for an app.
  yield* sql`
    CREATE TABLE app_viewers (
      app_id text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      share_name boolean NOT NULL DEFAULT false,
      share_email boolean NOT NULL DEFAULT false,
      consented_at timestamptz,
      last_opened_at timestamptz,
      PRIMARY KEY (app_id, user_id)
    )`

  // Shared services go back to their creators when the family is deleted.
  yield* sql`
    ALTER TABLE services ADD CONSTRAINT services_family_fk
      FOREIGN KEY (family_id) REFERENCES teams (id) ON DELETE SET NULL`
})
