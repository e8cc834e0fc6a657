/**
 * One attacker of `npm run bench:hostile`, as a child process over IPC: receives its plan,
 * prepares, says `ready`, waits for `go`, runs its attack to the deadline and sends its report.
 * It exits when the bench goes away.
 */
import { runAttack } from "./attacks.ts";
import type { AttackPlan, AttackReport } from "./types.ts";

export type ToAttacker = { type: "plan"; plan: AttackPlan } | { type: "go" };
export type FromAttacker = { type: "ready" } | { type: "report"; report: AttackReport } | { type: "failed"; message: string };

function tell(message: FromAttacker): Promise<void> {
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}

if (process.send) {
  process.on("disconnect", () => process.exit(0));
  let go: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    go = resolve;
  });
  process.on("message", (message: ToAttacker) => {
    if (message.type === "go") return go();
    runAttack(message.plan, async () => {
      await tell({ type: "ready" });
      await started;
    })
      .then((report) => tell({ type: "report", report }))
      .catch((error: unknown) =>
        tell({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
      )
      .finally(() => process.exit(0));
  });
}
