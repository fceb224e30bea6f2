/**
 * Rotation math, table-driven: who is on call (overrides, before startsAt, invalid rotations), the
 * `next` escalation target, zone validation, and a two-year walk checked against Intl's own calendar.
 */
import { assert, describe, it } from "@effect/vitest"
import { isValidTimezone, nextAfter, onCallAt, type RotationSpec, shiftsFrom } from "../../src/oncall/Rotation.ts"
import { iso, ms, override, rotation, type Row, row, walk } from "./rotationTables.ts"

describe("Rotation rules", () => {
  it("has nobody on call before startsAt, with no members, or with an unreadable rotation", () => {
    const base = rotation("2026-01-05T09:00:00Z")
    const cases: ReadonlyArray<{ name: string; rotation: RotationSpec; at: string; onCall: string | undefined }> = [
      { name: "before startsAt", rotation: base, at: "2026-01-05T08:59:59.999Z", onCall: undefined },
      { name: "at startsAt", rotation: base, at: "2026-01-05T09:00:00Z", onCall: "ann" },
      { name: "no members", rotation: { ...base, members: [] }, at: "2026-01-06T12:00:00Z", onCall: undefined },
      { name: "invalid zone", rotation: { ...base, timezone: "Mars/Olympus" }, at: "2026-01-06T12:00:00Z", onCall: undefined },
      { name: "invalid handoffAt", rotation: { ...base, handoffAt: "24:00" }, at: "2026-01-06T12:00:00Z", onCall: undefined },
      { name: "handoffAt without padding", rotation: { ...base, handoffAt: "9:00" }, at: "2026-01-06T12:00:00Z", onCall: undefined }
    ]
    for (const c of cases) {
      assert.strictEqual(onCallAt(c.rotation, [], ms(c.at))?.userId, c.onCall, c.name)
      if (c.onCall === undefined && c.name !== "before startsAt") {
        assert.deepStrictEqual(shiftsFrom(c.rotation, [], ms(c.at), 6), [], c.name)
        assert.strictEqual(nextAfter(c.rotation, ms(c.at)), undefined, c.name)
      }
    }
    // Before startsAt the list starts with the first shift.
    assert.deepStrictEqual(shiftsFrom(base, [], ms("2026-01-01T00:00:00Z"), 2).map(row), [
      ["ann", "2026-01-05T09:00:00.000Z", "2026-01-06T09:00:00.000Z", 24],
      ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]
    ])
    assert.deepStrictEqual(shiftsFrom(base, [], ms("2026-01-06T00:00:00Z"), 0), [])
  })

  it("validates time zones", () => {
    const cases: ReadonlyArray<readonly [string, boolean]> = [
      ["Europe/Berlin", true],
      ["America/New_York", true],
      ["Asia/Kolkata", true],
      ["Australia/Lord_Howe", true],
      ["UTC", true],
      ["Mars/Olympus", false],
      ["", false],
      ["+05:30", false],
      [" Europe/Berlin", false],
      ["Europe/Berlin/Mitte", false]
    ]
    for (const [zone, valid] of cases) assert.strictEqual(isValidTimezone(zone), valid, zone)
  })

  it("names the next member of the rotation, ignoring who is on call by override", () => {
    const base = rotation("2026-01-05T09:00:00Z")
    const berlin = rotation("2026-03-01T08:00:00Z", { timezone: "Europe/Berlin" })
    const cases: ReadonlyArray<readonly [string, RotationSpec, string, string | undefined]> = [
      ["before startsAt", base, "2026-01-05T08:00:00Z", undefined],
      ["at startsAt", base, "2026-01-05T09:00:00Z", "bob"],
      ["just before the first hand-off", base, "2026-01-06T08:59:59.999Z", "bob"],
      ["at the first hand-off", base, "2026-01-06T09:00:00Z", "cy"],
      ["wraps to the first member", base, "2026-01-07T10:00:00Z", "ann"],
      ["one member: the same person", { ...base, members: ["ann"] }, "2026-01-07T10:00:00Z", "ann"],
      // Shift 27 (ann) runs from 2026-03-28 08:00Z to 2026-03-29 07:00Z.
      ["Berlin, in the 23-hour shift", berlin, "2026-03-29T06:59:00Z", "bob"],
      ["Berlin, after its early hand-off", berlin, "2026-03-29T07:00:00Z", "cy"]
    ]
    for (const [name, r, at, expected] of cases) assert.strictEqual(nextAfter(r, ms(at)), expected, name)
  })

  it("splices overrides in, cutting the rotation shift around them", () => {
    const base = rotation("2026-01-05T09:00:00Z")
    walk([
      {
        name: "inside one shift",
        rotation: base,
        overrides: [override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T15:00:00Z")],
        at: "2026-01-05T10:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-05T12:00:00.000Z", 3],
          ["zed", "2026-01-05T12:00:00.000Z", "2026-01-05T15:00:00.000Z", 3, "o1"],
          ["ann", "2026-01-05T15:00:00.000Z", "2026-01-06T09:00:00.000Z", 18],
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]
        ]
      },
      {
        name: "`at` after an override inside the shift: the shift starts where the override ended",
        rotation: base,
        overrides: [override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T15:00:00Z")],
        at: "2026-01-05T16:00:00Z",
        expected: [
          ["ann", "2026-01-05T15:00:00.000Z", "2026-01-06T09:00:00.000Z", 18],
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]
        ]
      },
      {
        name: "spanning a hand-off",
        rotation: base,
        overrides: [override("o1", "zed", "2026-01-05T20:00:00Z", "2026-01-06T12:00:00Z")],
        at: "2026-01-05T10:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-05T20:00:00.000Z", 11],
          ["zed", "2026-01-05T20:00:00.000Z", "2026-01-06T12:00:00.000Z", 16, "o1"],
          ["bob", "2026-01-06T12:00:00.000Z", "2026-01-07T09:00:00.000Z", 21],
          ["cy", "2026-01-07T09:00:00.000Z", "2026-01-08T09:00:00.000Z", 24]
        ]
      },
      {
        name: "back to back",
        rotation: base,
        overrides: [
          override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T14:00:00Z"),
          override("o2", "yan", "2026-01-05T14:00:00Z", "2026-01-05T16:00:00Z")
        ],
        at: "2026-01-05T09:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-05T12:00:00.000Z", 3],
          ["zed", "2026-01-05T12:00:00.000Z", "2026-01-05T14:00:00.000Z", 2, "o1"],
          ["yan", "2026-01-05T14:00:00.000Z", "2026-01-05T16:00:00.000Z", 2, "o2"],
          ["ann", "2026-01-05T16:00:00.000Z", "2026-01-06T09:00:00.000Z", 17]
        ]
      },
      {
        name: "overlapping: the later override wins its window and the earlier resumes after it",
        rotation: base,
        overrides: [
          override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T18:00:00Z"),
          override("o2", "yan", "2026-01-05T14:00:00Z", "2026-01-05T16:00:00Z")
        ],
        at: "2026-01-05T09:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-05T12:00:00.000Z", 3],
          ["zed", "2026-01-05T12:00:00.000Z", "2026-01-05T14:00:00.000Z", 2, "o1"],
          ["yan", "2026-01-05T14:00:00.000Z", "2026-01-05T16:00:00.000Z", 2, "o2"],
          ["zed", "2026-01-05T16:00:00.000Z", "2026-01-05T18:00:00.000Z", 2, "o1"],
          ["ann", "2026-01-05T18:00:00.000Z", "2026-01-06T09:00:00.000Z", 15]
        ]
      },
      {
        name: "overlapping, created the other way round: the later (wider) one hides the earlier",
        rotation: base,
        overrides: [
          override("o2", "yan", "2026-01-05T14:00:00Z", "2026-01-05T16:00:00Z"),
          override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T18:00:00Z")
        ],
        at: "2026-01-05T09:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-05T12:00:00.000Z", 3],
          ["zed", "2026-01-05T12:00:00.000Z", "2026-01-05T18:00:00.000Z", 6, "o1"],
          ["ann", "2026-01-05T18:00:00.000Z", "2026-01-06T09:00:00.000Z", 15]
        ]
      },
      {
        name: "partly overlapping: the later one takes the overlap",
        rotation: base,
        overrides: [
          override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T16:00:00Z"),
          override("o2", "yan", "2026-01-05T14:00:00Z", "2026-01-05T18:00:00Z")
        ],
        at: "2026-01-05T13:00:00Z",
        expected: [
          ["zed", "2026-01-05T12:00:00.000Z", "2026-01-05T14:00:00.000Z", 2, "o1"],
          ["yan", "2026-01-05T14:00:00.000Z", "2026-01-05T18:00:00.000Z", 4, "o2"],
          ["ann", "2026-01-05T18:00:00.000Z", "2026-01-06T09:00:00.000Z", 15]
        ]
      },
      {
        name: "covering whole shifts: the rotation keeps counting underneath",
        rotation: base,
        overrides: [override("o1", "zed", "2026-01-05T09:00:00Z", "2026-01-08T09:00:00Z")],
        at: "2026-01-06T12:00:00Z",
        expected: [
          ["zed", "2026-01-05T09:00:00.000Z", "2026-01-08T09:00:00.000Z", 72, "o1"],
          ["ann", "2026-01-08T09:00:00.000Z", "2026-01-09T09:00:00.000Z", 24],
          ["bob", "2026-01-09T09:00:00.000Z", "2026-01-10T09:00:00.000Z", 24]
        ]
      },
      {
        name: "before startsAt an override still puts its person on call",
        rotation: base,
        overrides: [override("o1", "zed", "2026-01-04T12:00:00Z", "2026-01-05T12:00:00Z")],
        at: "2026-01-04T00:00:00Z",
        expected: [
          ["zed", "2026-01-04T12:00:00.000Z", "2026-01-05T12:00:00.000Z", 24, "o1"],
          ["ann", "2026-01-05T12:00:00.000Z", "2026-01-06T09:00:00.000Z", 21],
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]
        ]
      },
      {
        name: "an override across the Berlin spring-forward hand-off",
        rotation: rotation("2026-03-01T08:00:00Z", { timezone: "Europe/Berlin" }),
        overrides: [override("o1", "zed", "2026-03-28T20:00:00Z", "2026-03-29T10:00:00Z")],
        at: "2026-03-28T12:00:00Z",
        expected: [
          ["ann", "2026-03-28T08:00:00.000Z", "2026-03-28T20:00:00.000Z", 12],
          ["zed", "2026-03-28T20:00:00.000Z", "2026-03-29T10:00:00.000Z", 14, "o1"],
          ["bob", "2026-03-29T10:00:00.000Z", "2026-03-30T07:00:00.000Z", 21]
        ]
      },
      {
        name: "empty and inverted overrides are ignored",
        rotation: base,
        overrides: [
          override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T12:00:00Z"),
          override("o2", "yan", "2026-01-05T14:00:00Z", "2026-01-05T13:00:00Z")
        ],
        at: "2026-01-05T10:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-06T09:00:00.000Z", 24],
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]
        ]
      },
      {
        name: "a rotation without members: only the overrides",
        rotation: { ...base, members: [] },
        overrides: [
          override("o1", "zed", "2026-01-06T12:00:00Z", "2026-01-06T14:00:00Z"),
          override("o2", "yan", "2026-01-07T12:00:00Z", "2026-01-07T14:00:00Z")
        ],
        at: "2026-01-05T10:00:00Z",
        expected: [
          ["zed", "2026-01-06T12:00:00.000Z", "2026-01-06T14:00:00.000Z", 2, "o1"],
          ["yan", "2026-01-07T12:00:00.000Z", "2026-01-07T14:00:00.000Z", 2, "o2"]
        ]
      }
    ])
    // Past the last override of a member-less rotation the list simply ends.
    assert.strictEqual(
      shiftsFrom({ ...base, members: [] }, [override("o1", "zed", "2026-01-06T12:00:00Z", "2026-01-06T14:00:00Z")], ms("2026-01-05T10:00:00Z"), 6).length,
      1
    )
  })

  it("answers who is on call at an instant, the override winning its window", () => {
    const base = rotation("2026-01-05T09:00:00Z")
    const overrides = [
      override("o1", "zed", "2026-01-05T12:00:00Z", "2026-01-05T18:00:00Z"),
      override("o2", "yan", "2026-01-05T14:00:00Z", "2026-01-05T16:00:00Z")
    ]
    const cases: ReadonlyArray<readonly [string, Row | undefined]> = [
      ["2026-01-05T08:00:00Z", undefined],
      ["2026-01-05T11:59:59.999Z", ["ann", "2026-01-05T09:00:00.000Z", "2026-01-05T12:00:00.000Z", 3]],
      ["2026-01-05T12:00:00Z", ["zed", "2026-01-05T12:00:00.000Z", "2026-01-05T14:00:00.000Z", 2, "o1"]],
      ["2026-01-05T15:00:00Z", ["yan", "2026-01-05T14:00:00.000Z", "2026-01-05T16:00:00.000Z", 2, "o2"]],
      ["2026-01-05T17:00:00Z", ["zed", "2026-01-05T16:00:00.000Z", "2026-01-05T18:00:00.000Z", 2, "o1"]],
      ["2026-01-05T18:00:00Z", ["ann", "2026-01-05T18:00:00.000Z", "2026-01-06T09:00:00.000Z", 15]],
      ["2026-01-06T09:00:00Z", ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]]
    ]
    for (const [at, expected] of cases) {
      const shift = onCallAt(base, overrides, ms(at))
      assert.deepStrictEqual(shift === undefined ? undefined : row(shift), expected, at)
    }
  })
  it("agrees with the platform's own calendar over two years of shifts in every tested zone", () => {
    // An independent oracle: Intl's wall clock of each hand-off, not Effect's DateTime.
    const formats = new Map<string, Intl.DateTimeFormat>()
    const formatOf = (zone: string) => {
      const known = formats.get(zone)
      if (known !== undefined) return known
      const made = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric"
      })
      formats.set(zone, made)
      return made
    }
    const wall = (zone: string, at: number) => {
      const parts = formatOf(zone).formatToParts(at)
      const get = (type: string) => Number(parts.find((p) => p.type === type)?.value)
      return {
        day: Date.UTC(get("year"), get("month") - 1, get("day")) / 86_400_000,
        time: `${String(get("hour")).padStart(2, "0")}:${String(get("minute")).padStart(2, "0")}:${get("second")}`
      }
    }
    const zones = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Adelaide", "Australia/Lord_Howe"]
    for (const timezone of zones) {
      for (const period of ["daily", "weekly"] as const) {
        const days = period === "daily" ? 1 : 7
        const r = rotation("2025-01-01T00:00:00Z", { timezone, period, handoffAt: "09:00", members: ["a", "b", "c", "d"] })
        const shifts = shiftsFrom(r, [], r.startsAt, period === "daily" ? 730 : 105)
        const name = `${timezone} ${period}`
        assert.strictEqual(shifts[0]?.startsAt, r.startsAt, name)
        shifts.forEach((shift, k) => {
          const where = `${name} shift ${k} at ${iso(shift.startsAt)}`
          assert.strictEqual(shift.userId, r.members[k % 4], where)
          const next = shifts[k + 1]
          if (next !== undefined) assert.strictEqual(shift.endsAt, next.startsAt, where)
          const hours = (shift.endsAt - shift.startsAt) / 3_600_000
          if (k > 0) {
            assert.strictEqual(wall(timezone, shift.startsAt).time, "09:00:0", where)
            assert.strictEqual(wall(timezone, shift.endsAt).day - wall(timezone, shift.startsAt).day, days, where)
            assert.isTrue(Math.abs(hours - 24 * days) <= 1, `${where}: ${hours} hours`)
          }
          // The arithmetic index lands on the same shift the sequential walk reached.
          for (const at of [shift.startsAt, shift.endsAt - 1]) {
            assert.deepStrictEqual(onCallAt(r, [], at), shift, `${where} onCallAt ${iso(at)}`)
            assert.strictEqual(nextAfter(r, at), r.members[(k + 1) % 4], `${where} nextAfter ${iso(at)}`)
          }
        })
        const longer = shifts.filter((s, k) => k > 0 && s.endsAt - s.startsAt > days * 86_400_000).length
        const shorter = shifts.filter((s, k) => k > 0 && s.endsAt - s.startsAt < days * 86_400_000).length
        // Two years hold two DST changes each way where the zone has DST (weekly may miss none).
        const expected = timezone === "UTC" || timezone === "Asia/Kolkata" ? 0 : 2
        assert.strictEqual(longer, expected, `${name} longer shifts`)
        assert.strictEqual(shorter, expected, `${name} shorter shifts`)
      }
    }
  })

  it("finds the shift for an instant decades after startsAt without walking there", () => {
    // Daily in Berlin since 2000-01-01 09:00 CET: the shift of 2026-03-28 is number 9583.
    const r = rotation("2000-01-01T08:00:00Z", { timezone: "Europe/Berlin", members: ["a", "b", "c", "d", "e", "f", "g"] })
    const k = (Date.UTC(2026, 2, 28) - Date.UTC(2000, 0, 1)) / 86_400_000
    assert.strictEqual(k, 9583)
    const at = ms("2026-03-28T12:00:00Z")
    assert.deepStrictEqual(shiftsFrom(r, [], at, 2).map(row), [
      [r.members[k % 7] as string, "2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", 23],
      [r.members[(k + 1) % 7] as string, "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z", 24]
    ])
    // Called on every group read and every page: a few hundred reads must stay well under a second
    // (walking ~9,600 hand-offs per read would not).
    const overrides = [override("o1", "zed", "2026-03-29T10:00:00Z", "2026-03-29T12:00:00Z")]
    const started = performance.now()
    for (let i = 0; i < 300; i++) {
      assert.strictEqual(shiftsFrom(r, overrides, at + i * 60_000, 6).length, 6)
    }
    const elapsed = performance.now() - started
    assert.isBelow(elapsed, 1500, `300 reads took ${elapsed} ms`)
  })
})
