/**
 * Every point in time a record gives in Unix seconds (`…Timestamp`, `timestamp`, `lastRun`) has a
 * `DateTime` twin beside it, named with `Time` for `Timestamp` (`blockTimestamp` → `blockTime`,
 * `timestamp` → `time`, `lastRun` → `lastRunTime`), null where the seconds are.
 */

/** The `DateTime` of Unix seconds, or null where there are none. */
export function dateTimeOf(seconds: number): Date;
export function dateTimeOf(seconds: number | null | undefined): Date | null;
export function dateTimeOf(seconds: number | null | undefined): Date | null {
  return seconds === null || seconds === undefined ? null : new Date(seconds * 1000);
}
