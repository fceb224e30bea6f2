/**
 * The seeded soak's history (soak.ts `--seeded`): a million push receipts
 * (`SOAK_SEED_ROWS`) with the notifications, inbox copies and feed entries
 * they belong to, written by one SQL transaction of `INSERT … SELECT
 * generate_series` so it takes seconds, not the hours sending them would.
 *
 * Each seeded row is a copy of the row the server wrote for one real
 * notification (the template), with its keys, owner, times and outcome
 * replaced (`jsonb_populate_record(template, changes)`): the contents, their
 * sizes and any column a later migration adds are the server's own, not
 * this file's guess. What is replaced, and why:
 * - ids: the server's shape (`prefix_` + 10 base32 characters of creation
 *   time + 16 more), so they sort by time as the server's do and the
 *   soak's new ids go to the right of the history in every index;
 * - owners: the bench's person and 4 more with 3 phones each (2 iOS, 1
 *   Android, like the bench's), a notification's 3 receipts on its person's 3;
 * - times: spread evenly over the 4 weeks before the last day;
 * - outcome: 97 % accepted, 2 % error (`DeviceInactive`), 1 % unknown; none
 *   pending, as a month-old queue holds none; 90 % of inbox copies read.
 * Not seeded: the sandbox provider's own record (`push_sandbox_deliveries`),
 * which a database on a real provider does not hold.
 *
 * Then `VACUUM (ANALYZE)` of what was written and a `CHECKPOINT`: a month-old
 * database has been visited by autovacuum (inserts alone trigger it since
 * PostgreSQL 13) and written out, while this test server runs with
 * autovacuum off; without them the soak's first minute would pay for the
 * seed (hint bits, the checkpoint) and its plans would see no statistics.
 * `SOAK_SEED_VACUUM=0` leaves the VACUUM out, to see that case too.
 */
import { psql } from "./support.ts"

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"

/** SQL for the 10 base32 characters of the time `ms` that begin an id's body (packages/server/src/lib/Ids.ts). */
const stampSql = (ms: string) =>
  Array.from({ length: 10 }, (_, i) => `substr('${alphabet}', ((${ms} >> ${5 * (9 - i)}) & 31)::int + 1, 1)`).join(" || ")
/** SQL for an id like `makeId`'s: prefix, a time stamp (stampSql, made once per notification: it is the seed's dearest expression), 16 hex chars of `n`. */
const idSql = (prefix: string, stamp: string, n: string) => `'${prefix}_' || ${stamp} || lpad(to_hex(${n}), 16, '0')`
const sixtyDaysAgo = stampSql("(extract(epoch FROM now() - interval '60 days') * 1000)::bigint")

/** The seed's statements, one transaction; `templateId` is the notification whose rows are copied. */
const seedSql = (templateId: string, receipts: number) => {
  const notifications = Math.ceil(receipts / 3)
  return `
BEGIN;
-- 4 more people, each with 3 phones copied from the bench person's (same platforms, own tokens).
CREATE TEMP TABLE seed_template_user AS SELECT u.* FROM users u JOIN notifications n ON n.user_id = u.id WHERE n.id = '${templateId}';
INSERT INTO users SELECT r.* FROM seed_template_user u, generate_series(1, 4) g,
  LATERAL jsonb_populate_record(u, jsonb_build_object(
    'id', ${idSql("usr", sixtyDaysAgo, "g")},
    'email', 'seed-' || g || '@example.test', 'name', 'Seed ' || g)) r;
INSERT INTO devices SELECT r.* FROM
  (SELECT u.id AS user_id, u.email, d, row_number() OVER (ORDER BY u.id, d.id) AS n
   FROM users u, devices d WHERE u.email LIKE 'seed-%' AND d.user_id = (SELECT id FROM seed_template_user)) x,
  LATERAL jsonb_populate_record(x.d, jsonb_build_object(
    'id', ${idSql("dev", sixtyDaysAgo, "x.n")},
    'user_id', x.user_id, 'push_token', x.email || '-' || (x.d).push_token)) r;
-- k: which notifications are whose; devices in creation order, the template's receipts in the same order.
CREATE TEMP TABLE seed_people AS
  SELECT (row_number() OVER (ORDER BY u.id) - 1)::int AS k, u.id AS user_id, array_agg(d.id ORDER BY d.id) AS devices
  FROM users u JOIN devices d ON d.user_id = u.id
  WHERE u.email LIKE 'seed-%' OR u.id = (SELECT id FROM seed_template_user) GROUP BY u.id;
CREATE TEMP TABLE seed_n AS
  SELECT g, p.user_id, p.devices, t.at, ${idSql("anot", "t.stamp", "g")} AS id, t.stamp
  FROM generate_series(1, ${notifications}) g
  JOIN seed_people p ON p.k = g % (SELECT count(*) FROM seed_people),
  LATERAL (SELECT at, ${stampSql("(extract(epoch FROM at) * 1000)::bigint")} AS stamp
           FROM (SELECT now() - interval '29 days' + (g::float8 / ${notifications}) * interval '28 days' AS at) a) t
  ORDER BY g;
INSERT INTO notifications SELECT r.* FROM seed_n s, notifications t,
  LATERAL jsonb_populate_record(t, jsonb_build_object('id', s.id, 'user_id', s.user_id, 'created_at', s.at)) r
  WHERE t.id = '${templateId}' ORDER BY s.g;
-- The inbox's seq is drawn in time order (seed_n is read in g order: written so, the template one row).
INSERT INTO inbox_items SELECT r.* FROM seed_n s, inbox_items t,
  LATERAL jsonb_populate_record(t, jsonb_build_object(
    'seq', nextval(pg_get_serial_sequence('inbox_items', 'seq')), 'user_id', s.user_id, 'item_id', s.id, 'created_at', s.at,
    'read_at', CASE WHEN s.g % 10 = 0 THEN NULL ELSE s.at + interval '1 hour' END)) r
  WHERE t.origin = 'notification' AND t.item_id = '${templateId}';
INSERT INTO activity_feed SELECT r.* FROM seed_n s, activity_feed t,
  LATERAL jsonb_populate_record(t, jsonb_build_object(
    'id', ${idSql("afi", "s.stamp", "s.g")}, 'user_id', s.user_id, 'ref_id', s.id, 'created_at', s.at)) r
  WHERE t.kind = 'notification' AND t.ref_id = '${templateId}' ORDER BY s.g;
INSERT INTO push_receipts SELECT r.* FROM seed_n s,
  (SELECT row_number() OVER (ORDER BY device_id)::int AS slot, t FROM push_receipts t WHERE t.item_id = '${templateId}') t,
  LATERAL (SELECT s.g * 3 + t.slot AS n, CASE WHEN (s.g * 3 + t.slot) % 100 < 97 THEN 'accepted'
                  WHEN (s.g * 3 + t.slot) % 100 < 99 THEN 'error' ELSE 'unknown' END AS status) o,
  LATERAL jsonb_populate_record(t.t, jsonb_build_object(
    'id', ${idSql("rcp", "s.stamp", "o.n")}, 'user_id', s.user_id, 'device_id', s.devices[t.slot], 'item_id', s.id,
    'status', o.status, 'attempts', 1, 'next_attempt_at', s.at, 'claimed_at', NULL, 'claimed_by', NULL,
    'provider_id', CASE WHEN o.status = 'accepted' THEN ${idSql("sbx", "s.stamp", "o.n")} END,
    'error_code', CASE WHEN o.status = 'error' THEN 'DeviceInactive' END,
    'checked_at', s.at + interval '20 milliseconds', 'created_at', s.at)) r
  WHERE (s.g - 1) * 3 + t.slot <= ${receipts}
  ORDER BY s.g, t.slot;
COMMIT;`
}

const tables = ["users", "devices", "notifications", "inbox_items", "activity_feed", "push_receipts"]

/**
 * Seeds `receipts` receipts after the template notification's; the seconds each step took, for the output.
 * `vacuum: false` (`SOAK_SEED_VACUUM=0`) leaves the history as this autovacuum-less server would: no statistics.
 */
export const seed = (databaseUrl: string, templateId: string, receipts: number, { vacuum = true } = {}) => {
  const time = (f: () => unknown) => {
    const began = performance.now()
    f()
    return (performance.now() - began) / 1000
  }
  const insert = time(() => psql(databaseUrl, seedSql(templateId, receipts)))
  const vacuumed = vacuum ? time(() => psql(databaseUrl, `VACUUM (ANALYZE) ${tables.join(", ")}`)) : undefined
  const checkpoint = time(() => psql(databaseUrl, "CHECKPOINT"))
  return { insert, vacuum: vacuumed, checkpoint }
}
