import type { LogFields, Logger } from '@cornice/sdk';

export interface LogLine {
  level: string;
  msg: string;
  fields?: LogFields;
}

/** A logger that keeps every line (children share the list). */
export function captureLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (msg: string, fields?: LogFields) => void lines.push({ level, msg, ...(fields ? { fields } : {}) });
  const log = { lines, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal'), child: () => log };
  return log;
}
