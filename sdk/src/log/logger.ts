/**
 * Structured logging contract. Messages are constant strings; context goes in fields.
 * Never put keys, passwords or other secrets in a message or field.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'off';

export type LogFields = Record<string, unknown>;

export interface Logger {
  trace(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  fatal(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` (e.g. `{ module: 'keystore' }`) to every line. */
  child(fields: LogFields): Logger;
}

/** A logger that drops everything (tests, libraries used without a node). */
export const silentLogger: Logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  child() {
    return silentLogger;
  },
};
