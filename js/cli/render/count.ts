/**
 * Numbers as a person reads them.
 *
 * @module
 */

/** `7431` → `7,431`. */
export const count = (n: number): string => n.toLocaleString("en-US");
