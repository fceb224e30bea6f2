/**
 * Embedded databases a test worker keeps from file to file. Opening a PGlite on a fresh copy of the
 * template costs about 0.6 s of CPU per file (the copy, WebAssembly start, PostgreSQL's own start);
 * emptying the tables of one a finished file used costs about 30 ms. So a file takes an idle database
 * of its worker, and gives it back emptied: every row deleted, sequences restarted, the session's
 * state (settings, advisory locks) discarded — the template's state again. One whose schema a file
 * changed, or that grew large, is closed instead of reused, and any reset that fails closes it too.
 * The data directories live inside the run's template directory, which globalSetup removes.
 */
import { Effect, Exit, Scope } from "effect"
import type { SqlError } from "effect/sql"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as path from "node:path"
import { embeddedClientLayer } from "../../packages/server/src/db/Database.ts"
import { serveEmbedded } from "../../packages/server/src/db/Embedded.ts"

interface Pooled {
  readonly socket: string
  readonly scope: Scope.Closeable
  /** The schema it was opened with; the cluster's own tables (made at a server's first start) left out. */
  readonly schema: string
}

/** More than this in the tables after a reset (dead rows a DELETE leaves) and the database is closed instead. */
const MAX_BYTES_KEPT = 16 * 1024 * 1024

const idle: Array<Pooled> = []

const schemaFingerprint = `
  SELECT md5(string_agg(x, ',' ORDER BY x)) AS fingerprint FROM (
    SELECT format('%s.%s:%s:%s:%s', table_name, column_name, data_type, is_nullable, column_default) AS x
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT LIKE 'cluster\\_%'
    UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename NOT LIKE 'cluster\\_%'
    UNION ALL SELECT tgname || ':' || tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT conname || ':' || pg_get_constraintdef(oid) FROM pg_constraint
      WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text NOT LIKE 'cluster\\_%'
    UNION ALL SELECT oid::regprocedure::text FROM pg_proc WHERE pronamespace = 'public'::regnamespace
    UNION ALL SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
  ) s`

// Foreign keys are not checked while emptying (session_replication_role), so the order does not matter.
const emptyTables = `
  DO $$ DECLARE r record; BEGIN
    FOR r IN SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables
      WHERE schemaname = 'public' AND tablename <> 'herald_migrations' LOOP
      EXECUTE 'DELETE FROM ' || r.t;
    END LOOP;
    FOR r IN SELECT format('%I.%I', schemaname, sequencename) AS s FROM pg_sequences WHERE schemaname = 'public' LOOP
      EXECUTE 'ALTER SEQUENCE ' || r.s || ' RESTART';
    END LOOP;
  END $$`

const tableBytes = `
  SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename)::regclass)), 0)::float8 AS bytes
    FROM pg_tables WHERE schemaname = 'public'`

const withClient = <A>(socket: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, SqlError.SqlError>) =>
  Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  }).pipe(Effect.provide(embeddedClientLayer(socket)), Effect.scoped)

const fingerprint = (sql: SqlClient.SqlClient) =>
  Effect.map(sql.unsafe<{ fingerprint: string }>(schemaFingerprint), (rows) => rows[0]!.fingerprint)

/** Opens a new database on a copy of the template (in its `pool` folder); it stays open until discarded. */
const open = (templateDir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const dir = yield* Effect.sync(() => {
      const root = path.join(templateDir, "pool")
      fs.mkdirSync(root, { recursive: true })
      const made = fs.mkdtempSync(path.join(root, "db-"))
      fs.cpSync(path.join(templateDir, "pgdata"), path.join(made, "pgdata"), { recursive: true })
      return made
    })
    // Finalizers run last-added first: the directory goes once PGlite has closed.
    yield* Scope.addFinalizer(scope, Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    const socket = yield* Scope.provide(scope)(serveEmbedded(dir)).pipe(
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    const schema = yield* withClient(socket, fingerprint)
    return { socket, scope, schema } satisfies Pooled
  })

const discard = (db: Pooled) => Scope.close(db.scope, Exit.void)

/** Empties a database a file is done with; true when it is the template's state again and may be reused. */
const reset = (db: Pooled) =>
  withClient(db.socket, (sql) =>
    Effect.gen(function*() {
      // A file cut short may leave the shared session inside a transaction (a warning when not).
      yield* sql.unsafe("ROLLBACK")
      yield* sql.unsafe("SET session_replication_role = replica")
      yield* sql.unsafe(emptyTables)
      yield* sql.unsafe("DISCARD ALL")
      const [size] = yield* sql.unsafe<{ bytes: number }>(tableBytes)
      return (yield* fingerprint(sql)) === db.schema && size!.bytes <= MAX_BYTES_KEPT
    }))

/** The socket of an embedded database at the template's state for the scope's lifetime. */
export const pooledEmbedded = (templateDir: string) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const db = idle.pop()
      return db === undefined ? open(templateDir) : Effect.succeed(db)
    }),
    (db) =>
      reset(db).pipe(
        Effect.matchCauseEffect({
          onFailure: () => discard(db),
          onSuccess: (reusable) => reusable ? Effect.sync(() => idle.push(db)) : discard(db)
        })
      )
  ).pipe(Effect.map((db) => db.socket), Effect.orDie)
