/**
 * The summary `npm run bench` ends with: one row per target (issues 22 and 36), Herald
 * measured next to its floor in the same run. Rows without a target (CPU time)
 * inform and are not counted; a row whose part did not run is left out.
 */

export interface SummaryRow {
  /** What is measured, e.g. `GET /auth/status req/s`. */
  readonly what: string
  readonly herald: string
  /** The stack's floor measured in the same run; `—` where there is none. */
  readonly floor: string
  /** Herald / floor, where the target is one. */
  readonly ratio: string
  readonly target: string
  /** Undefined: information only, not counted. */
  readonly met: boolean | undefined
}

export const summaryRow = (row: Partial<SummaryRow> & Pick<SummaryRow, "what" | "herald" | "target" | "met">): SummaryRow => ({
  floor: "—",
  ratio: "—",
  ...row
})

/** Numbers for the table. */
export const fixed = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n) ? "—" : n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
export const seconds = (ms: number | undefined) => (ms === undefined ? "failed" : `${(ms / 1000).toFixed(2)} s`)
export const ratioOf = (herald: number, floor: number) => (floor > 0 ? (herald / floor).toFixed(2) : "—")

export const printSummary = (rows: ReadonlyArray<SummaryRow>, notes: ReadonlyArray<string>) => {
  const columns = ["measured", "Herald", "floor", "ratio", "target", "met"] as const
  const cells = rows.map((r) => [r.what, r.herald, r.floor, r.ratio, r.target, r.met === undefined ? "—" : r.met ? "yes" : "NO"])
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)))
  const line = (values: ReadonlyArray<string>) =>
    values.map((v, i) => (i === 0 || i === 4 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join("  ").trimEnd()
  console.log("\n== summary: Herald and its floor, same run ==\n")
  console.log(line(columns))
  console.log(line(widths.map((w) => "-".repeat(w))))
  for (const row of cells) console.log(line(row))
  const counted = rows.filter((r) => r.met !== undefined)
  console.log(`\ntargets met: ${counted.filter((r) => r.met).length} of ${counted.length}`)
  for (const note of notes) console.log(note)
}
