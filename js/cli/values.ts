/**
 * Reading parsed flag values: typed getters, and the number flags with their bounds (a value
 * out of bounds is a usage error).
 *
 * @module
 */
import { type FlagValues, usageError } from "./spec.ts";

/** The string flag `name`, if given. */
export function text(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** Whether the boolean flag `name` was given. */
export function flag(values: FlagValues, name: string): boolean {
  return values[name] === true;
}

/** The flag `name` as a whole number ≥ 1, if given. */
export function positiveInt(values: FlagValues, name: string): number | undefined {
  const value = text(values, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    usageError(`--${name} takes a whole number ≥ 1, not ${JSON.stringify(value)}`);
  }
  return n;
}

/** The flag `name` as a whole number ≥ 0, if given. */
export function nonNegative(values: FlagValues, name: string): number | undefined {
  const value = text(values, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    usageError(`--${name} takes a whole number ≥ 0, not ${JSON.stringify(value)}`);
  }
  return n;
}

/** The flag `name` as a percentage from 0 to 100, if given. */
export function percent(values: FlagValues, name: string): number | undefined {
  const value = text(values, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 100) {
    usageError(`--${name} takes a number from 0 to 100, not ${JSON.stringify(value)}`);
  }
  return n;
}
