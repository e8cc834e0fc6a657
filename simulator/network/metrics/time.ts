/** The time grid of the Metrics API: points start on the hour, at 00:00 UTC, on Mondays or on the first of the month. */
import type { MetricsTimeInterval } from "../../../src/upstream/types.ts";

const HOUR = 3600;
export const DAY = 86_400;

/**
 * A value at the start of an interval, covering the interval. Wei amounts are bigints: they pass
 * 2^53, and the routes send them as JSON numbers with every digit, as the Metrics API does.
 */
export interface MetricPoint {
  timestamp: number;
  value: number | bigint;
}

function floorTo(timestamp: number, unit: number): number {
  return timestamp - (((timestamp % unit) + unit) % unit);
}

/** The start of the interval that holds `timestamp` (Unix seconds). */
export function intervalStart(timestamp: number, interval: MetricsTimeInterval): number {
  switch (interval) {
    case "hour":
      return floorTo(timestamp, HOUR);
    case "day":
      return floorTo(timestamp, DAY);
    case "week": {
      const day = floorTo(timestamp, DAY);
      // 1970-01-01 was a Thursday: three days after a Monday.
      const sinceMonday = (((day / DAY + 3) % 7) + 7) % 7;
      return day - sinceMonday * DAY;
    }
    case "month": {
      const date = new Date(timestamp * 1000);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000;
    }
  }
}

/** The start of the interval after the one that starts at `start`. */
export function nextIntervalStart(start: number, interval: MetricsTimeInterval): number {
  switch (interval) {
    case "hour":
      return start + HOUR;
    case "day":
      return start + DAY;
    case "week":
      return start + 7 * DAY;
    case "month": {
      const date = new Date(start * 1000);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / 1000;
    }
  }
}

/** Every interval start from the interval of `first` to the interval of `last`, oldest first. */
export function intervalStarts(first: number, last: number, interval: MetricsTimeInterval): number[] {
  const starts: number[] = [];
  for (let start = intervalStart(first, interval); start <= last; start = nextIntervalStart(start, interval)) starts.push(start);
  return starts;
}

/** The points of a newest-first series whose timestamps fall within [start, end]. */
export function withinRange(series: readonly MetricPoint[], start: number | undefined, end: number | undefined): MetricPoint[] {
  // Newest first: the points at or before `end` begin at `from`, those at or after `start` end before `to`.
  const from = end === undefined ? 0 : firstIndex(series, (point) => point.timestamp <= end);
  const to = start === undefined ? series.length : firstIndex(series, (point) => point.timestamp < start);
  return series.slice(from, Math.max(from, to));
}

/** The first index whose point satisfies a predicate that, along the series, turns from false to true once. */
function firstIndex(series: readonly MetricPoint[], test: (point: MetricPoint) => boolean): number {
  let low = 0;
  let high = series.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (test(series[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}
