import type { Plugin } from "graphql-yoga";
import { refusalResponse } from "./refusals.ts";

/**
 * Refuses a POST whose declared body is over `maxBodyBytes` (MAX_BODY_BYTES, default 100,000) with
 * 413, and one that declares no length with 411, before Yoga reads it. It must run before any
 * plugin that reads a body.
 */
export function useBodyLimit(maxBodyBytes: number): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== "POST") return;
      const declared = request.headers.get("content-length");
      if (declared === null) {
        endResponse(refusalResponse(fetchAPI.Response, 411, "A POST must declare its content-length", "LENGTH_REQUIRED"));
      } else if (Number(declared) > maxBodyBytes) {
        endResponse(
          refusalResponse(
            fetchAPI.Response,
            413,
            `The request body is over the limit of ${maxBodyBytes} bytes`,
            "PAYLOAD_TOO_LARGE",
          ),
        );
      }
    },
  };
}
