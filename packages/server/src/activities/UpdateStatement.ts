/**
 * The statements that change a device's queue of updates: the shared update
 * statement (group commit of concurrent updates) and the rule of which unsent
 * routine snapshots a newer one supersedes (used by updates and by ends).
 */
import type { Array as Arr } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import type { UpdateWrite } from "./Rows.ts"

/**
 * Operation `o` is an unsent routine update queued after its device's last
 * barrier (start, milestone, end), below sequence `below` (none: any it
 * can see; within one statement every operation is older than its update).
 */
export const supersedable = (sql: SqlClient.SqlClient, below: Statement.Fragment | undefined) => {
  const under = (column: Statement.Fragment) => below === undefined ? sql`` : sql`AND ${column} < ${below}`
  return sql`
    o.status = 'queued' AND o.op = 'update' AND o.priority_reason IN ('routine', 'budget_exhausted') ${under(sql`o.seq`)}
      AND o.seq > COALESCE((SELECT max(b.seq) FROM live_activity_operations b
        WHERE b.activity_id = o.activity_id AND b.device_id = o.device_id AND b.status IN ('queued', 'sending')
          ${under(sql`b.seq`)} AND NOT (b.op = 'update' AND b.priority_reason IN ('routine', 'budget_exhausted'))), 0)`
}

/**
 * The shared statement of concurrent updates (group commit): one update per
 * activity (its actor serializes them), the props travelling once, inside the
 * payload (its `content-state`).
 *
 * Its cost grows with the batch and nothing else, whatever the planner's
 * statistics say of the queue: the writes are one JSON object looked up by
 * activity id (`w`), every step reads the batch's own rows by index
 * (`activity_id = ANY(ids)`, or the primary key), and the steps meet through
 * hashed sets (`NOT IN`) and one grouping, never a join the planner could run
 * as a loop over a whole step. A server behind on its updates makes larger
 * batches; each must not cost more per update, or it falls further behind.
 */
export const enqueueStatement = (sql: SqlClient.SqlClient, writes: Arr.NonEmptyReadonlyArray<UpdateWrite>) => {
  const ids = writes.map((w) => w.activityId)
  const byId = JSON.stringify(Object.fromEntries(writes.map((w) => [w.activityId, w])))
  return sql`
    WITH w AS (SELECT ${byId}::jsonb AS m),
    a AS (
      UPDATE live_activities la SET props = (SELECT m FROM w) -> la.id -> 'payload' -> 'apns' -> 'aps' -> 'content-state',
        sequence = la.sequence + 1, updated_at = now(),
        milestone_grants = ARRAY(SELECT jsonb_array_elements_text((SELECT m FROM w) -> la.id -> 'grants')::bigint)
      WHERE la.id = ANY(${ids}::text[]) AND la.sequence = ((SELECT m FROM w) -> la.id ->> 'expectedSequence')::int
        AND la.status NOT IN ('ended', 'expired', 'failed')
      RETURNING la.id, la.sequence
    ), skipped AS (
      -- The batch's activities the guard refused (moved on elsewhere, or ended): left as they are.
      SELECT x AS id FROM unnest(${ids}::text[]) AS x WHERE x NOT IN (SELECT id FROM a)
    ), t AS (
      -- Each device showing (or about to show) an updated activity, its write (the new sequence is the
      -- expected one's successor), and its newest unfinished operation.
      SELECT t.activity_id AS id, t.device_id, (SELECT m FROM w) -> t.activity_id AS write,
        ((SELECT m FROM w) -> t.activity_id ->> 'expectedSequence')::int + 1 AS sequence,
        (SELECT b.id FROM live_activity_operations b WHERE b.activity_id = t.activity_id AND b.device_id = t.device_id
           AND b.status IN ('queued', 'sending') ORDER BY b.seq DESC LIMIT 1) AS newest
      FROM live_activity_targets t
      WHERE t.activity_id = ANY(${ids}::text[]) AND t.activity_id NOT IN (SELECT id FROM skipped)
        AND t.status IN ('queued', 'active')
    ), rep AS (
      -- A routine update takes the place of the device's unsent routine snapshot when that is the
      -- newest thing queued: the queue stays one snapshot long and its order is kept (the row keeps
      -- its place and its created_at, which the update-token wait counts from).
      -- A snapshot waiting out a provider's backoff keeps waiting (and its attempts count on).
      UPDATE live_activity_operations o SET payload = (SELECT m FROM w) -> o.activity_id -> 'payload',
        priority_reason = (SELECT m FROM w) -> o.activity_id ->> 'reason'
      WHERE o.activity_id = ANY(${ids}::text[])
        AND o.id = ANY(ARRAY(SELECT newest FROM t WHERE (write ->> 'priority')::int = 5 AND newest IS NOT NULL))
        AND o.status = 'queued' AND o.op = 'update' AND o.priority_reason IN ('routine', 'budget_exhausted')
      RETURNING o.id, o.activity_id, o.device_id
    ), ins AS (
      -- Otherwise a new row (also when the snapshot was claimed for sending meanwhile, by another node).
      INSERT INTO live_activity_operations (id, activity_id, device_id, seq, op, priority, priority_reason, payload)
      SELECT t.id || '_' || t.device_id || '_' || t.sequence, t.id, t.device_id, t.sequence, 'update',
        (t.write ->> 'priority')::int, t.write ->> 'reason', t.write -> 'payload'
      FROM t WHERE t.newest IS NULL OR t.newest NOT IN (SELECT id FROM rep)
      RETURNING id, activity_id, device_id
    ), sup AS (
      -- Any newer snapshot (a milestone too) replaces the unsent routine ones after the device's last barrier.
      UPDATE live_activity_operations o SET status = 'superseded'
      WHERE o.activity_id = ANY(${ids}::text[]) AND o.activity_id NOT IN (SELECT id FROM skipped)
        AND o.id NOT IN (SELECT id FROM rep) AND ${supersedable(sql, undefined)}
      RETURNING o.activity_id
    ), answer AS (
      SELECT id AS activity_id, sequence, 0 AS superseded, NULL::text AS device_id, NULL::text AS operation_id FROM a
      UNION ALL SELECT activity_id, NULL, 1, NULL, NULL FROM sup
      UNION ALL SELECT activity_id, NULL, 1, device_id, id FROM rep
      UNION ALL SELECT activity_id, NULL, 0, device_id, id FROM ins
    )
    SELECT activity_id AS id, max(sequence) AS sequence, sum(superseded)::int AS superseded,
      COALESCE(array_agg(device_id ORDER BY device_id) FILTER (WHERE device_id IS NOT NULL), '{}') AS device_ids,
      COALESCE(array_agg(operation_id ORDER BY device_id) FILTER (WHERE operation_id IS NOT NULL), '{}') AS operation_ids
    FROM answer GROUP BY activity_id`
}
