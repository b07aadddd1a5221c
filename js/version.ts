/**
 * The release version, printed by `s3sync --version`. It must equal the version in
 * `Cargo.toml`, `deno.json` and `package.json` (`tests/dist/version_test.ts` checks all four):
 * a constant rather than a read of `deno.json`, so the compiled binary and the published
 * package carry it without shipping or reading a config file.
 *
 * @module
 */

/** This release's version (semver). */
export const VERSION = "0.1.0";
