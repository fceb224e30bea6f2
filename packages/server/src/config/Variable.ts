/**
 * One environment variable, declared once: its name, type, default and meaning,
 * and the `Config` that reads it. The config modules build their values from
 * these declarations and `Reference.ts` renders `docs/configuration.md` from the
 * same ones, so the reference cannot drift from what the server reads.
 */
import { Config, ConfigProvider, Effect, LogLevel, Option, Record, Redacted } from "effect"

export interface Variable<A> {
  readonly name: string
  /** The type as the reference states it (what the server accepts). */
  readonly type: string
  /** The default as the reference states it; "(unset)" when nothing applies. */
  readonly default: string
  readonly description: string
  readonly config: Config.Config<A>
}

interface Doc {
  readonly description: string
}

interface Optional extends Doc {
  /** What applies when the variable is unset, for the reference (default "(unset)"). */
  readonly unset?: string
  /** An empty or blank value counts as unset, and a value is trimmed (a common shell idiom). */
  readonly blankIsUnset?: boolean
}

export const configError = (message: string) => new Config.ConfigError(new ConfigProvider.SourceError({ message }))

const code = (value: string | number | boolean) => `\`${value}\``

/**
 * A variable with a default, read as text and parsed here: a refusal names the
 * variable, the value and the rule (`PORT must be a port from 1 to 65535, not
 * "80a"`), never the schema's own wording.
 */
const defaulted = <A extends string | number | boolean>(
  type: string,
  parse: (name: string, value: string) => Effect.Effect<A, Config.ConfigError>
) =>
(name: string, options: Doc & { readonly default: A }): Variable<A> => ({
  name,
  type,
  default: code(options.default),
  description: options.description,
  config: Config.String(name).pipe(Config.mapEffect((value) => parse(name, value)), Config.withDefault(options.default))
})

/** Bounds of a count or a duration: `min` and `max` inclusive; `positive` for a number that must be above 0. */
export interface Range {
  readonly min?: number
  readonly max?: number
  readonly positive?: boolean
  /** What `0` means when the range allows it (e.g. "turns the limit off"), for the reference. */
  readonly zero?: string
}

const ruleOf = (kind: "an integer" | "a number", range: Range) =>
  range.positive === true
    ? `${kind} above 0`
    : range.min !== undefined && range.max !== undefined
    ? `${kind} from ${range.min} to ${range.max}`
    : range.min !== undefined
    ? `${kind} of at least ${range.min}`
    : range.max !== undefined
    ? `${kind} of at most ${range.max}`
    : kind

const typeOf = (kind: "integer" | "number", range: Range) => {
  const bounds = range.positive === true
    ? "above 0"
    : range.min !== undefined && range.max !== undefined
    ? `${range.min}–${range.max}`
    : range.min !== undefined
    ? `≥ ${range.min}`
    : range.max !== undefined
    ? `≤ ${range.max}`
    : ""
  return [kind, bounds, range.zero === undefined ? "" : `(\`0\` ${range.zero})`].filter((s) => s !== "").join(" ")
}

/** A number in range, or a refusal naming the variable, the value and the rule. */
export const parseNumber = (name: string, value: string, options: Range & { readonly integer: boolean }) => {
  const text = value.trim()
  const n = text === "" ? Number.NaN : Number(text)
  const inRange = Number.isFinite(n) && (!options.integer || Number.isInteger(n)) &&
    (options.positive !== true || n > 0) && (options.min === undefined || n >= options.min) &&
    (options.max === undefined || n <= options.max)
  return inRange
    ? Effect.succeed(n)
    : Effect.fail(configError(`${name} must be ${ruleOf(options.integer ? "an integer" : "a number", options)}, not ${JSON.stringify(value)}`))
}

/**
 * An integer variable. Every count, size and duration states its range: a
 * negative or zero value is refused at start unless `0` has a documented
 * meaning (`zero`), so a typo cannot quietly turn a limit into nonsense.
 */
export const integer = (name: string, options: Doc & Range & { readonly default: number }): Variable<number> =>
  defaulted<number>(typeOf("integer", options), (n, v) => parseNumber(n, v, { ...options, integer: true }))(name, options)

/** A decimal variable, with a range as `integer`'s. */
export const number = (name: string, options: Doc & Range & { readonly default: number }): Variable<number> =>
  defaulted<number>(typeOf("number", options), (n, v) => parseNumber(n, v, { ...options, integer: false }))(name, options)

const portRule = (name: string, value: string) =>
  Effect.mapError(
    parseNumber(name, value, { integer: true, min: 1, max: 65535 }),
    () => configError(`${name} must be a port from 1 to 65535, not ${JSON.stringify(value)}`)
  )

export const port = defaulted<number>("port (1–65535)", portRule)

const booleans: Record<string, boolean> = { true: true, false: false, "1": true, "0": false, yes: true, no: false, on: true, off: false, y: true, n: false }

export const boolean = defaulted<boolean>("boolean (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`)", (name, value) => {
  const b = booleans[value.trim().toLowerCase()]
  return b !== undefined
    ? Effect.succeed(b)
    : Effect.fail(configError(`${name} must be true or false (also 1/0, yes/no, on/off), not ${JSON.stringify(value)}`))
})

export const string = defaulted<string>("string", (_, value) => Effect.succeed(value))

const unsetText = (options: Optional) => options.unset ?? "(unset)"

export const optionalString = (name: string, options: Optional): Variable<Option.Option<string>> => ({
  name,
  type: "string",
  default: unsetText(options),
  description: options.description,
  config: options.blankIsUnset === true
    ? Config.option(Config.String(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")), Config.map(Option.map((s) => s.trim())))
    : Config.option(Config.String(name))
})

/** A secret: read as `Redacted`, never printed. */
export const optionalSecret = (name: string, options: Optional): Variable<Option.Option<Redacted.Redacted<string>>> => ({
  name,
  type: "secret string",
  default: unsetText(options),
  description: options.description,
  config: options.blankIsUnset === true
    ? Config.option(Config.Redacted(name)).pipe(Config.map(Option.filter((s) => Redacted.value(s).trim() !== "")))
    : Config.option(Config.Redacted(name))
})

export const literals = <const L extends ReadonlyArray<string>>(
  name: string,
  values: L,
  options: Doc & { readonly default: L[number] }
): Variable<L[number]> => ({
  name,
  type: `one of ${values.map(code).join(", ")}`,
  default: code(options.default),
  description: options.description,
  config: Config.String(name).pipe(
    Config.mapEffect((value) =>
      values.includes(value)
        ? Effect.succeed(value as L[number])
        : Effect.fail(configError(`${name} must be one of ${values.join(", ")}, not ${JSON.stringify(value)}`))
    ),
    Config.withDefault(options.default)
  )
})

/** Other spellings operators type for a level (syslog and Python say "warning"). */
const levelAliases: Record<string, LogLevel.LogLevel> = { warning: "Warn" }

/** A log level by any case of its name: `warn`, `WARN` and `Warn` are the same level. */
export const parseLogLevel = (name: string, value: string): Effect.Effect<LogLevel.LogLevel, Config.ConfigError> => {
  const wanted = value.trim().toLowerCase()
  const level = LogLevel.values.find((l) => l.toLowerCase() === wanted) ?? levelAliases[wanted]
  return level !== undefined
    ? Effect.succeed(level)
    : Effect.fail(configError(`${name} must be one of ${LogLevel.values.join(", ")} (any case; "warning" means Warn), not ${JSON.stringify(value)}`))
}

export const logLevel = (name: string, options: Doc & { readonly default: LogLevel.LogLevel }): Variable<LogLevel.LogLevel> => ({
  name,
  type: `log level: ${LogLevel.values.map(code).join(", ")}, in any case (\`warning\` means \`Warn\`)`,
  default: code(options.default),
  description: options.description,
  config: Config.String(name).pipe(Config.mapEffect((value) => parseLogLevel(name, value)), Config.withDefault(options.default))
})

/**
 * The `Config` of a record of variables: one value per key, read together.
 * (`Config.all` of the mapped record; the cast restores the per-key types that
 * mapping a record loses.)
 */
export const configOf = <V extends Record<string, Variable<unknown>>>(
  variables: V
): Config.Config<{ readonly [K in keyof V]: Config.Success<V[K]["config"]> }> =>
  Config.all(Record.map(variables, (v) => v.config)) as never

/** The declarations of a record of variables, in declaration order. */
export const list = (variables: Record<string, Variable<unknown>>): ReadonlyArray<Variable<unknown>> => Object.values(variables)
