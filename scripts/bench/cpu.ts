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

/** CPU seconds several processes have used together. */
export const cpuSecondsOf = (pids: ReadonlyArray<number>) => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)

/** Runs `f`, answering its result and the CPU milliseconds `pid` spent per `count(result)`. */
export const cpuPer = async <A>(pid: number, f: () => Promise<A>, count: (a: A) => number) => {
  const before = cpuSeconds(pid)
  const result = await f()
  return { result, cpuMs: ((cpuSeconds(pid) - before) * 1000) / Math.max(1, count(result)) }
}
