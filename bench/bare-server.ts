/**
 * The physical limit of a response-cache hit: a bare `node:http` server that reads each request's
 * body and answers with fixed bytes (BARE_BODY, base64; BARE_CONTENT_TYPE), as the gateway answers
 * a hit. Prints `{"event":"listening","url":…}` when it listens.
 */
import { createServer } from "node:http";

const body = Buffer.from(process.env.BARE_BODY ?? "", "base64");
const contentType = process.env.BARE_CONTENT_TYPE ?? "application/json; charset=utf-8";

const server = createServer((request, response) => {
  request.resume();
  request.once("end", () => {
    response.writeHead(200, { "content-type": contentType, "content-length": body.byteLength });
    response.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ event: "listening", url: `http://127.0.0.1:${port}/graphql` })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
