/**
 * The wire format of the spec: a query parameter the contract types as an array, with OpenAPI's
 * default style (`form`, exploded), goes as the parameter repeated, once per value
 * (`txTypes=ImportTx&txTypes=ExportTx`), never comma-joined. Every such parameter of a route the
 * gateway calls must have a document here that makes the gateway send it with several values.
 */
import { describe, expect, it } from "vitest";
import dataContract from "../src/upstream/contract/data-api.json" with { type: "json" };
import metricsContract from "../src/upstream/contract/metrics-api.json" with { type: "json" };
import { ROUTES } from "../src/upstream/routes.ts";
import { execute, simulatorGet, useHarness, type Harness } from "./support/harness.ts";

interface Parameter {
  name: string;
  in: string;
  style?: string;
  explode?: boolean;
  schema?: { type?: string };
}
type Contract = { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };

/** "GET /path name" of each array query parameter on a route the gateway calls, with its style. */
function arrayParameters(): Map<string, { style: string; explode: boolean }> {
  const called = new Set(Object.values(ROUTES).map((route) => route.path as string));
  const found = new Map<string, { style: string; explode: boolean }>();
  for (const contract of [dataContract, metricsContract] as unknown as Contract[]) {
    for (const [path, operations] of Object.entries(contract.paths)) {
      if (!called.has(path)) continue;
      for (const [method, operation] of Object.entries(operations)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== "query" || parameter.schema?.type !== "array") continue;
          const style = parameter.style ?? "form";
          found.set(`${method.toUpperCase()} ${path} ${parameter.name}`, {
            style,
            explode: parameter.explode ?? style === "form",
          });
        }
      }
    }
  }
  return found;
}

/** An address of the simulator's P-Chain: one that an output of its latest transactions went to. */
async function pChainAddress(harness: Harness): Promise<string> {
  const page = await simulatorGet<{ transactions: { emittedUtxos?: { addresses: string[] }[] }[] }>(
    harness,
    "data",
    "/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=20",
  );
  const address = page.transactions.flatMap((tx) => tx.emittedUtxos ?? []).flatMap((utxo) => utxo.addresses)[0];
  if (address === undefined) throw new Error("no P-Chain address in the simulator's latest transactions");
  return address;
}

/** A document that sends the parameter with these values (as the upstream spells them). */
const SENDS: Record<string, { query: (harness: Harness) => Promise<string>; values: string[] }> = {
  "GET /v1/networks/{network}/blockchains/{blockchainId}/transactions txTypes": {
    query: async (harness) =>
      `{ primaryNetwork(network: MAINNET) { pChain { transactions(addresses: ["${await pChainAddress(harness)}"], txTypes: [IMPORT_TX, EXPORT_TX], first: 2) { nodes { txHash } } } } }`,
    values: ["ImportTx", "ExportTx"],
  },
};

describe("array query parameters", () => {
  const harness = useHarness();
  const parameters = arrayParameters();

  it("every array query parameter of a called route is exploded `form` in the contract, and has a document here", () => {
    expect(parameters.size).toBeGreaterThan(0);
    for (const [key, { style, explode }] of parameters)
      expect({ key, style, explode }).toEqual({ key, style: "form", explode: true });
    expect(Object.keys(SENDS).sort()).toEqual([...parameters.keys()].sort());
  });

  it.each(Object.entries(SENDS))("%s goes as the parameter repeated, once per value", async (key, { query, values }) => {
    const [method, path, name] = key.split(" ") as [string, string, string];
    const document = await query(harness);
    harness.simulator.resetCounters();
    const result = await execute(harness, document);
    expect(result.body.errors).toBeUndefined();
    const sent = harness.simulator
      .requests()
      .filter((request) => request.method === method && request.route === `${method} ${path}`);
    expect(sent).toHaveLength(1);
    const search = new URLSearchParams(sent[0]!.rawQuery);
    expect(search.getAll(name)).toEqual(values);
    expect(sent[0]!.rawQuery).not.toMatch(/%2C/i);
  });
});
