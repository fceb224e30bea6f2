/**
 * The order files start in. Vitest runs the longest files first when it has their durations from an
 * earlier run, and the largest first on a fresh clone, which has none: there the end-to-end files, the
 * longest by far, started anywhere in the run, and one starting late held the run's end on one core
 * while the other had nothing left. So files that start processes (they import test/support/process.ts,
 * cluster.ts or the browser harness) go first, in vitest's own order, and the in-process files, short,
 * fill in around them and end the run. Once durations are known, vitest's order stands as it is.
 */
import * as fs from "node:fs"
import { BaseSequencer } from "vitest/node"
import type { TestSpecification } from "vitest/node"

const startsProcesses = /support\/(process|cluster|harness)\.ts"/

export class ProcessesFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    if (sorted.every((file) => this.ctx.cache.getTestSpecificationResult(file) !== undefined)) return sorted
    const heavy = new Map(sorted.map((file) => [file, startsProcesses.test(fs.readFileSync(file.moduleId, "utf8"))]))
    // Stable: within each half, vitest's order (projects, isolation, then size).
    return [...sorted.filter((file) => heavy.get(file)), ...sorted.filter((file) => !heavy.get(file))]
  }
}
