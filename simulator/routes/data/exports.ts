import type { IncomingMessage, ServerResponse } from "node:http";
import type { paths } from "../../../src/upstream/contract/data-api.ts";
import { errorBody, notFound } from "../../http/errors.ts";
import { sendJson } from "../../http/respond.ts";
import { routeDefiner, type RouteDefinition } from "../../http/router.ts";
import { EXPORT_DOWNLOAD_PATH, type ExportJobs } from "../../network/exports/index.ts";

const dataRoute = routeDefiner<paths>();

export function exportRoutes(jobs: ExportJobs): RouteDefinition[] {
  return [
    dataRoute("POST", "/v1/operations/transactions:export", ({ body, headers }) =>
      jobs.create(body, `http://${headers.host ?? "localhost"}`),
    ),

    dataRoute("GET", "/v1/operations/{operationId}", ({ path }) => {
      const operation = jobs.get(path.operationId);
      if (operation === undefined) throw notFound(`Operation ${path.operationId} not found`);
      return operation;
    }),
  ];
}

/** Serves the files of completed exports, as a storage host would: not a route of the contract, never counted. */
export function serveExportDownload(
  jobs: ExportJobs,
  request: IncomingMessage,
  response: ServerResponse,
  pathname: string,
): void {
  const operationId = /^([A-Za-z0-9-]+)\.csv$/.exec(pathname.slice(EXPORT_DOWNLOAD_PATH.length))?.[1];
  const file = request.method === "GET" && operationId !== undefined ? jobs.file(operationId) : undefined;
  if (file === undefined) return sendJson(response, 404, errorBody(404, `Cannot ${request.method} ${pathname}`));
  response.writeHead(200, {
    "content-type": "text/csv; charset=utf-8",
    "content-length": Buffer.byteLength(file),
    "content-disposition": `attachment; filename="${operationId}.csv"`,
  });
  response.end(file);
}
