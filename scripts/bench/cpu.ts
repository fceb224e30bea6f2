/** CPU seconds a process has used (Linux: /proc/<pid>/stat utime + stime, in clock ticks of 1/100 s); 0 elsewhere. */
import { readFileSync } from "node:fs"

export const cpuSeconds = (pid: number) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}

/** Runs `f`, answering its result and the CPU milliseconds `pid` spent per `count(result)`. */
export const cpuPer = async <A>(pid: number, f: () => Promise<A>, count: (a: A) => number) => {
  const before = cpuSeconds(pid)
  const result = await f()
  return { result, cpuMs: ((cpuSeconds(pid) - before) * 1000) / Math.max(1, count(result)) }
}

/**
 * The CPU seconds a changing set of processes (a pool's database backends)
 * spends from now until the answer's call: one that starts meanwhile counts
 * from 0; one that ends meanwhile is not counted (its reading went with it,
 * and pools close idle connections, which spent next to nothing).
 */
export const cpuSince = async (list: () => ReadonlyArray<number> | Promise<ReadonlyArray<number>>) => {
  const before = new Map((await list()).map((pid) => [pid, cpuSeconds(pid)]))
  return async () =>
    (await list()).reduce((sum, pid) => sum + Math.max(0, cpuSeconds(pid) - (before.get(pid) ?? 0)), 0)
}
