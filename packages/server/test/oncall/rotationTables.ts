/** Helpers for the rotation tables: instants as UTC ISO strings, shifts as readable rows. */
import { assert } from "@effect/vitest"
import { type OverrideSpec, type RotationSpec, type Shift, shiftsFrom } from "../../src/oncall/Rotation.ts"

export const ms = (iso: string): number => {
  const at = Date.parse(iso)
  if (Number.isNaN(at)) throw new Error(`bad instant ${iso}`)
  return at
}
export const iso = (at: number): string => new Date(at).toISOString()

/** A shift as the tables write it: [userId, startsAt, endsAt, hours, overrideId?]. */
export type Row = readonly [string, string, string, number, string?]
export const row = (s: Shift): Row => {
  const hours = (s.endsAt - s.startsAt) / 3_600_000
  return s.overrideId === undefined
    ? [s.userId, iso(s.startsAt), iso(s.endsAt), hours]
    : [s.userId, iso(s.startsAt), iso(s.endsAt), hours, s.overrideId]
}

export const rotation = (startsAt: string, patch: Partial<RotationSpec> = {}): RotationSpec => ({
  members: ["ann", "bob", "cy"],
  period: "daily",
  handoffAt: "09:00",
  timezone: "UTC",
  startsAt: ms(startsAt),
  ...patch
})

export const override = (id: string, userId: string, startsAt: string, endsAt: string): OverrideSpec => ({
  id,
  userId,
  startsAt: ms(startsAt),
  endsAt: ms(endsAt)
})

export interface ShiftCase {
  readonly name: string
  readonly rotation: RotationSpec
  readonly overrides?: ReadonlyArray<OverrideSpec>
  readonly at: string
  readonly expected: ReadonlyArray<Row>
}

export const walk = (cases: ReadonlyArray<ShiftCase>) => {
  for (const c of cases) {
    const got = shiftsFrom(c.rotation, c.overrides ?? [], ms(c.at), c.expected.length).map(row)
    assert.deepStrictEqual(got, c.expected, c.name)
  }
}
