/** What the bench parts share: reading JSON answers, and running a load process whose one JSON line is its result. */
import { spawn } from "node:child_process"
import * as path from "node:path"
import { createInterface } from "node:readline"

/** What a load process reports (loadReport.ts). */
export interface LoadResult {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly total: number
}

/** The JSON body of a successful answer; anything else throws with the answer's text. */
export const json = async (response: Response) => {
  if (!response.ok) throw new Error(`${response.url} answered ${response.status}: ${await response.text()}`)
  return response.json() as Promise<Record<string, any>>
}

/**
 * Runs a script of this folder in its own Node.js process and parses the JSON
 * line it prints last; `onMeasuring` is called when it prints `measuring` (a
 * load whose warm-up is over).
 */
export const runJson = <A = LoadResult>(script: string, args: ReadonlyArray<string>, onMeasuring?: () => void) =>
  new Promise<A>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, script), ...args], { stdio: ["ignore", "pipe", "inherit"] })
    const lines: Array<string> = []
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line === "measuring") onMeasuring?.()
      else lines.push(line)
    })
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(lines.at(-1) ?? "")) : reject(new Error(`${script} exited ${code}`))))
  })
