// Structured logs for steps and the dispatcher: consola with a reporter that writes one JSON object per line,
// carrying the resource (and whatever else the logger was bound to) on every line. Fields whose names suggest a
// secret are replaced before anything is written; callers still never pass secret values on purpose.
import { createConsola, type ConsolaInstance, type LogObject } from 'consola/core';

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** A logger adding `fields` to every line. */
  with(fields: Fields): Logger;
}

const secretName = /pass(word)?|secret|token|credential|authorization|private|access.?key|session/i;

/** A copy of `value` with every field named like a secret masked, at any depth. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || typeof value !== 'object' || value === null) return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Fields = {};
  for (const [k, v] of Object.entries(value)) out[k] = secretName.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

const levelNames: Record<number, string> = { 0: 'error', 1: 'warn', 2: 'info', 3: 'info', 4: 'debug', 5: 'trace' };

export function jsonLine(obj: LogObject, bound: Fields): string {
  const [message, fields] = obj.args as [unknown, Fields | undefined];
  const line = {
    time: obj.date.toISOString(),
    level: levelNames[obj.level] ?? obj.type,
    msg: typeof message === 'string' ? message : String(message),
    ...(redact(bound) as Fields),
    ...(redact(fields ?? {}) as Fields),
  };
  return `${JSON.stringify(line)}\n`;
}

export interface LoggerOptions {
  write?: (line: string) => void;
  /** consola levels: 3 info (default), 4 debug */
  level?: number;
}

export function createLogger(bound: Fields = {}, opts: LoggerOptions = {}): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line));
  const consola = createConsola({
    level: opts.level ?? (process.env.FERRY_DEBUG === '1' ? 4 : 3),
    // every line matters in a structured log: no collapsing of repeats
    throttle: 0,
    reporters: [{ log: (obj) => write(jsonLine(obj, bound)) }],
  });
  return wrap(consola, bound, opts);
}

function wrap(consola: ConsolaInstance, bound: Fields, opts: LoggerOptions): Logger {
  return {
    debug: (m, f) => consola.debug(m, f),
    info: (m, f) => consola.info(m, f),
    warn: (m, f) => consola.warn(m, f),
    error: (m, f) => consola.error(m, f),
    with: (fields) => createLogger({ ...bound, ...fields }, opts),
  };
}
