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

/** A variable with a default, read by one of `Config`'s constructors. */
const defaulted = <A extends string | number | boolean>(type: string, read: (name: string) => Config.Config<A>) =>
(name: string, options: Doc & { readonly default: A }): Variable<A> => ({
  name,
  type,
  default: code(options.default),
  description: options.description,
  config: read(name).pipe(Config.withDefault(options.default))
})

export const integer = defaulted<number>("integer", Config.Int)
export const number = defaulted<number>("number", Config.Number)
export const port = defaulted<number>("port (1–65535)", Config.Port)
export const boolean = defaulted<boolean>("boolean (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`)", Config.Boolean)
export const string = defaulted<string>("string", Config.String)

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
  config: Config.Literals(values, name).pipe(Config.withDefault(options.default))
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
