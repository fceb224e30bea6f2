/**
 * The retention sweep (decisions.md): a team with `retentionDays` set (1–3650)
 * keeps its audit entries that long; older ones are deleted. A team with null
 * keeps everything. One pass walks the teams with a retention and deletes in
 * bounded batches, each its own statement, so no pass holds a long lock or a
 * huge transaction; a worker (`team-retention-sweep` in runtime/Workers.ts)
 * runs a pass every `sweepEvery`.
 *
 * "Older than" is measured from the service clock at the start of the pass.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { AuditLogRepo } from "./AuditLogRepo.ts"

/** Entries deleted per statement. */
export const RETENTION_BATCH = 1_000
/** How often the sweep runs: hourly, so an entry outlives its retention by at most an hour (the spec asks daily). */
export const RETENTION_SWEEP_EVERY = Duration.hours(1)

const DAY_MS = 86_400_000

export class AuditRetention extends Context.Service<AuditRetention, {
  /** One pass over every team with a retention; how many entries it deleted. */
  readonly sweep: Effect.Effect<number>
  readonly sweepEvery: Duration.Duration
}>()("herald/AuditRetention") {
  static readonly layerNoDeps = Layer.effect(AuditRetention, Effect.gen(function*() {
    const repo = yield* AuditLogRepo

    // Batch after batch until one comes back short: the team's backlog is gone.
    const drain = (batch: Effect.Effect<number>, deletedSoFar = 0): Effect.Effect<number> =>
      Effect.flatMap(batch, (n) => n < RETENTION_BATCH ? Effect.succeed(deletedSoFar + n) : drain(batch, deletedSoFar + n))
    const sweepTeam = (teamId: string, before: string) =>
      Effect.zipWith(
        drain(repo.deleteOlder(teamId, before, RETENTION_BATCH)),
        drain(repo.deleteResolvedPages(teamId, before, RETENTION_BATCH)),
        (entries, pages) => entries + pages
      )

    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const teams = yield* repo.teamsWithRetention
      let deleted = 0
      for (const team of teams) {
        deleted += yield* sweepTeam(team.id, new Date(now - team.retentionDays * DAY_MS).toISOString())
      }
      if (deleted > 0) yield* Effect.logInfo(`audit retention: deleted ${deleted} entries`)
      return deleted
    }).pipe(Effect.withSpan("AuditRetention.sweep"))

    return AuditRetention.of({ sweep, sweepEvery: RETENTION_SWEEP_EVERY })
  }))

  static readonly layer = AuditRetention.layerNoDeps.pipe(Layer.provide(AuditLogRepo.layer))
}
