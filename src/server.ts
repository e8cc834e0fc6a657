/**
 * `npm start`: serves the gateway; without upstream URLs, on the embedded simulator. With
 * WORKERS > 1, this process is the primary of a cluster of gateway processes (src/server/cluster.ts),
 * and each worker runs this file again as one gateway process (src/server/gateway-process.ts).
 */
import cluster from "node:cluster";
import { superviseWorkers } from "./server/cluster.ts";
import { loadConfig } from "./config.ts";

const config = loadConfig();
if (config.workers > 1 && cluster.isPrimary) {
  await superviseWorkers(config);
} else {
  // Imported here, so that the primary of a cluster never loads the schema it does not serve.
  const { runGatewayProcess } = await import("./server/gateway-process.ts");
  await runGatewayProcess(config);
}
