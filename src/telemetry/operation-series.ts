/**
 * GraphQL operations' series: how long each ran and what errors it had, by operation name and
 * type. The names and labels are those of Yoga's Prometheus plugin, which the gateway used
 * before (dashboards keep working): `graphql_envelop_request_duration` (seconds, from execute
 * to its result, or to a stream's end) and `graphql_envelop_error_result` (by phase). Its
 * hooks cost a cheap operation more than a sixth of its CPU, for two series.
 *
 * Operation names come from a bounded set (OperationNameLabels); a name that loses its label
 * loses its series in both.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { OperationNameLabels } from "./operation-name-labels.ts";

/** The phases an operation's errors are counted by. */
export type ErrorPhase = "parse" | "validate" | "context" | "execute" | "subscribe";

const OPERATION_TYPES = new Set(["query", "mutation", "subscription"]);

interface Labels {
  operationName: string;
  operationType: string;
}

export class OperationSeries {
  private readonly duration: Histogram<"operationName" | "operationType">;
  private readonly errors: Counter<"operationName" | "operationType" | "phase">;
  /** Each labelled name's label sets, reused by its observations and removed with its label. */
  private readonly labelsOf = new Map<string, Map<string, Labels>>();
  /** The error label sets of each labelled name that had errors. */
  private readonly errorLabelsOf = new Map<string, Map<string, Labels & { phase: ErrorPhase }>>();

  constructor(
    registry: Registry,
    private readonly names: OperationNameLabels,
  ) {
    this.duration = new Histogram({
      name: "graphql_envelop_request_duration",
      help: "Time spent on running the GraphQL operation from parse to execute",
      labelNames: ["operationType", "operationName"],
      registers: [registry],
    });
    this.errors = new Counter({
      name: "graphql_envelop_error_result",
      help: "Counts the amount of errors reported from all phases",
      labelNames: ["operationType", "operationName", "phase"],
      registers: [registry],
    });
    names.onUnlabelled((unlabelled) => {
      for (const name of unlabelled) {
        for (const labels of this.labelsOf.get(name)?.values() ?? []) this.duration.remove(labels);
        for (const labels of this.errorLabelsOf.get(name)?.values() ?? []) this.errors.remove(labels);
        this.labelsOf.delete(name);
        this.errorLabelsOf.delete(name);
      }
    });
  }

  /** An operation that ran (its name earns a label by it), for `seconds`. */
  ran(operationName: string | undefined, operationType: string | undefined, seconds: number): void {
    const name = this.names.label(operationName, true);
    const type = typeOf(operationType);
    this.duration.observe(
      labelSet(this.labelsOf, name, type, () => ({ operationName: name, operationType: type })),
      seconds,
    );
  }

  /** `count` errors of an operation in `phase` (counted without earning its name a label again). */
  failed(operationName: string | undefined, operationType: string | undefined, phase: ErrorPhase, count = 1): void {
    const name = this.names.label(operationName, false);
    const type = typeOf(operationType);
    const labels = labelSet(this.errorLabelsOf, name, `${type}:${phase}`, () => ({
      operationName: name,
      operationType: type,
      phase,
    }));
    this.errors.inc(labels, count);
  }
}

/** The label set `key` of the name `operationName`, made once and kept with the name's others. */
function labelSet<L>(byName: Map<string, Map<string, L>>, operationName: string, key: string, make: () => L): L {
  let ofName = byName.get(operationName);
  if (ofName === undefined) byName.set(operationName, (ofName = new Map()));
  let labels = ofName.get(key);
  if (labels === undefined) ofName.set(key, (labels = make()));
  return labels;
}

function typeOf(operationType: string | undefined): string {
  return operationType !== undefined && OPERATION_TYPES.has(operationType) ? operationType : "unknown";
}
