/**
 * Reading parsed flag values: typed getters, and the number flags with their bounds (a value
 * out of bounds is a usage error).
 *
 * @module
 */
import { SyncError } from "../core/errors.ts";
import { BUCKET_NAME_RULE, bucketNameImpossible } from "../core/store_errors.ts";
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

/** The flag `name` as a number > 0 (fractions allowed: `--timeout 0.5`), if given. */
export function positiveNumber(values: FlagValues, name: string): number | undefined {
  const value = text(values, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) {
    usageError(`--${name} takes a number > 0, not ${JSON.stringify(value)}`);
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

/**
 * The flag `name`, if given, refused when empty: `--namespace ""` would silently mean "no
 * namespace", a different datastore from the one a person meant to name.
 */
export function nonEmptyText(
  values: FlagValues,
  name: string,
  absentMeans: string,
): string | undefined {
  const value = text(values, name);
  if (value === "") {
    usageError(`--${name} is empty: give a value, or leave the flag out for ${absentMeans}`);
  }
  return value;
}

/**
 * `--endpoint`, if given, as an http(s) URL. Without a scheme (`127.0.0.1:9000`) the SDK fails
 * later with a bare "Invalid URL"; this says what to add, before any request.
 */
export function endpointUrl(values: FlagValues): string | undefined {
  const value = text(values, "endpoint");
  if (value === undefined) return undefined;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    usageError(
      `--endpoint ${JSON.stringify(value)} has no scheme: add http:// or https://, ` +
        `e.g. --endpoint http://${value}`,
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    usageError(`--endpoint ${JSON.stringify(value)} is not a URL, e.g. http://127.0.0.1:9000`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    usageError(`--endpoint ${JSON.stringify(value)} must start with http:// or https://`);
  }
  return value;
}

/**
 * `--bucket`, refused before any request when no S3 server could hold a bucket of that name
 * (`--bucket b`: too short). Exit 2, as a usage error, with its own code.
 */
export function bucketName(values: FlagValues): string {
  const bucket = text(values, "bucket") ?? "";
  if (bucketNameImpossible(bucket)) {
    throw new SyncError(
      "invalid-bucket-name",
      `${JSON.stringify(bucket)} is not a valid bucket name: ${BUCKET_NAME_RULE}`,
    );
  }
  return bucket;
}
