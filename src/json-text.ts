/** JSON text written by hand where a hot path writes the same shapes over and over (log lines, cursors). */

/** Printable ASCII but `"` and `\`: a string JSON writes as it is, between quotes. */
const PLAIN = /^[ !#-[\]-~]*$/;

/** `JSON.stringify(value)` of a string, without its call for what needs no escaping (ids, names, hashes). */
export function jsonString(value: string): string {
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}
