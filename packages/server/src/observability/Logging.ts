/**
 * Logs go to stderr (stdout is reserved for the CLI's JSON answers), as one
 * JSON object per line with `LOG_FORMAT=json`, else human-readable lines.
 * `LogToStderr` alone does not do it: it steers only the default and pretty
 * loggers, while `consoleJson`/`consoleLogFmt` always write to stdout.
 */
import { Layer, Logger, References } from "effect"
import type { AppConfigShape } from "../config/AppConfig.ts"

export const loggingLayer = (config: Pick<AppConfigShape, "logFormat" | "logLevel">) =>
  Layer.mergeAll(
    Logger.layer([Logger.withConsoleError(config.logFormat === "json" ? Logger.formatJson : Logger.formatLogFmt)]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel),
    Layer.succeed(Logger.LogToStderr, true)
  )
