/**
 * Reading environment variables, for config.ts and the settings modules it calls (the only code
 * that reads the environment). Every reader throws ConfigError, with the variable's name, on a
 * value it cannot use; an unset or blank variable takes the fallback.
 */

/** A setting in the environment is wrong or missing: the service does not start, and says why. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = NodeJS.ProcessEnv;

/** The trimmed value, or undefined when unset or blank. */
export function text(env: Env, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

/** A whole number within [min, max]. */
export function wholeNumber(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A positive number (fractions allowed). */
export function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`${name} must be a positive number, got "${raw}"`);
  return n;
}

/** true/false (also 1/0, yes/no). */
export function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/** One of `choices`. */
export function oneOf<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be ${either(choices)}, got "${raw}"`);
  return raw as T;
}

/** `a, b or c`. */
export function either(choices: readonly string[]): string {
  return choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}` : (choices[0] ?? '');
}

/** An http(s) URL, without trailing slashes. */
export function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** Comma-separated values, blanks dropped. */
export function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** All of `names` or none: a half-configured service is a mistake worth stopping for. */
export function together(env: Env, names: readonly string[]): string[] | undefined {
  const values = names.map((n) => text(env, n));
  if (values.every((v) => v === undefined)) return undefined;
  const missing = names.filter((_, i) => values[i] === undefined);
  if (missing.length > 0) throw new ConfigError(`${missing.join(' and ')} must be set together with ${names.filter((n) => !missing.includes(n)).join(', ')}`);
  return values as string[];
}
