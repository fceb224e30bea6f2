/**
 * The database baseline: `connections` clients of raw `pg`, each inserting one
 * row per round trip into a table of notification-sized rows for `seconds`.
 * Prints {rowsPerSecond, p50, p99} as JSON.
 * argv: databaseUrl seconds connections
 */
import pg from "pg"

const [url, seconds, connections] = process.argv.slice(2)
const pool = new pg.Pool({ connectionString: url!, max: Number(connections) })
await pool.query(`CREATE TABLE IF NOT EXISTS bench_raw_inserts (
  id bigserial PRIMARY KEY, title text NOT NULL, body text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`)

const latencies: Array<number> = []
const deadline = Date.now() + Number(seconds) * 1000
const worker = async () => {
  const client = await pool.connect()
  try {
    while (Date.now() < deadline) {
      const started = performance.now()
      await client.query("INSERT INTO bench_raw_inserts (title, body) VALUES ($1, $2)", ["Build finished", "All tests passed."])
      latencies.push(performance.now() - started)
    }
  } finally {
    client.release()
  }
}
const started = Date.now()
await Promise.all(Array.from({ length: Number(connections) }, worker))
const elapsed = (Date.now() - started) / 1000
await pool.query("DROP TABLE bench_raw_inserts")
await pool.end()
latencies.sort((a, b) => a - b)
const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 100) / 100
process.stdout.write(JSON.stringify({ requestsPerSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), total: latencies.length }) + "\n")
