import { STATUS_CODES } from "node:http";
import type { components } from "../../src/upstream/contract/data-api.ts";

/** Every error status of both contracts shares this shape. */
export type ErrorBody = components["schemas"]["BadRequest"];

/** An error that becomes an HTTP answer with the contract's error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }

  get body(): ErrorBody {
    return errorBody(this.status, this.message);
  }
}

export function errorBody(status: number, message: string): ErrorBody {
  return { message, error: STATUS_CODES[status] ?? "Error", statusCode: status };
}

export const badRequest = (message: string): HttpError => new HttpError(400, message);
export const notFound = (message: string): HttpError => new HttpError(404, message);
