/** A worker thread of the WarpVerifier: checks the signatures it is sent, one at a time. */
import { parentPort } from "node:worker_threads";
import { checkSignature, type SignatureCheckRequest } from "./signature-check.ts";

parentPort?.on("message", ({ id, request }: { id: number; request: SignatureCheckRequest }) => {
  try {
    parentPort!.postMessage({ id, check: checkSignature(request) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
