/**
 * Logs go to stderr (stdout is reserved for the CLI's JSON answers), as one
 * JSON object per line with `LOG_FORMAT=json`, else human-readable lines.
 */
import { Layer, Logger, References } from "effect"
import type { AppConfigShape } from "../config/AppConfig.ts"

export const loggingLayer = (config: Pick<AppConfigShape, "logFormat" | "logLevel">) =>
  Layer.mergeAll(
    Logger.layer([config.logFormat === "json" ? Logger.consoleJson : Logger.consoleLogFmt]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel),
    Layer.succeed(Logger.LogToStderr, true)
  )
