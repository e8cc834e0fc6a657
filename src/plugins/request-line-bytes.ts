/**
 * A request's log line encoded straight into stdout's batch (BatchedLines.roomFor): the same
 * bytes as its text (`{"level":30,"time":…` + bindings + fields + message), without the text. A
 * hit is answered in some 17 µs; made as a string, the line was a template of templates, kept as
 * a record until its batch was written, then flattened and encoded, which cost the hit about a
 * tenth. Here the parts that repeat (the head of a millisecond, an operation name's JSON, the
 * status) are bytes made once, copied into place; only the id and the numbers are written per line.
 */
import type { BatchedLines } from "../telemetry/log-destination.ts";
import { jsonString } from "../json-text.ts";
import { truncated } from "../telemetry/logger.ts";

/** What a request line carries: request-log.ts's RequestLine, as it is. */
export interface RequestLineFields {
  /** A sane token or a UUID (requestIdFrom): printable ASCII that JSON writes as it is. */
  requestId: string | undefined;
  transport?: string | undefined;
  method: string;
  operation: string | null;
  status: number;
}

/** How many operation names (and other repeated strings) keep their JSON as bytes; then the memo starts again. */
const REMEMBERED_STRINGS = 64;

const ascii = (text: string): Buffer => Buffer.from(text, "latin1");
const TIME_KEY = ascii(`{"level":30,"time":`);
const REQUEST_ID_KEY = ascii(`"requestId":"`);
const REQUEST_ID_END = ascii(`",`);
const TRANSPORT_KEY = ascii(`"transport":`);
const METHOD_KEY = ascii(`"method":`);
const OPERATION_KEY = ascii(`,"operation":`);
const NULL = ascii("null");
const STATUS_KEY = ascii(`,"status":`);
const MS_KEY = ascii(`,"ms":`);
/** The most bytes the numbers take: a time of 16 digits, a status and milliseconds of 24 characters each. */
const NUMBER_BYTES = 16 + 24 + 24;

export class RequestLineBytes {
  private readonly afterTime: Buffer;
  private readonly tail: Buffer;
  private readonly fixedBytes: number;
  private headAt = Number.NaN;
  private head: Buffer = Buffer.alloc(0);
  private readonly jsonOf = new BytesMemo(jsonString);
  private readonly methodOf = new BytesMemo(methodJson);
  private readonly statuses: (Buffer | undefined)[] = [];

  /** `afterTime` and `tail` as the logger's InfoLineFrame gives them. */
  constructor(
    private readonly batches: BatchedLines,
    afterTime: string,
    tail: string,
  ) {
    this.afterTime = Buffer.from(afterTime);
    this.tail = Buffer.from(tail);
    this.fixedBytes =
      TIME_KEY.length +
      this.afterTime.length +
      REQUEST_ID_KEY.length +
      REQUEST_ID_END.length +
      TRANSPORT_KEY.length +
      1 +
      METHOD_KEY.length +
      OPERATION_KEY.length +
      STATUS_KEY.length +
      MS_KEY.length +
      this.tail.length +
      NUMBER_BYTES;
  }

  /** Encodes the line of `now` (Date.now()) that took `ms`; false when it cannot be encoded in place (then it is written as text). */
  write(fields: RequestLineFields, now: number, ms: number): boolean {
    const id = fields.requestId;
    if (!(Number.isSafeInteger(now) && now >= 0)) return false;
    const transport = fields.transport ? this.jsonOf.of(fields.transport) : undefined;
    const method = fields.method === "POST" ? POST : this.methodOf.of(fields.method);
    const operation = fields.operation === null ? NULL : this.jsonOf.of(fields.operation);
    const most = this.fixedBytes + (id?.length ?? 0) + (transport?.length ?? 0) + method.length + operation.length;
    const batch = this.batches.roomFor(most);
    if (batch === undefined) return false;
    let at = put(batch, this.batches.end, this.headOf(now));
    if (id !== undefined) {
      at = put(batch, at, REQUEST_ID_KEY);
      for (let index = 0; index < id.length; index += 1) batch[at++] = id.charCodeAt(index);
      at = put(batch, at, REQUEST_ID_END);
    }
    if (transport !== undefined) {
      at = put(batch, at, TRANSPORT_KEY);
      at = put(batch, at, transport);
      batch[at++] = COMMA;
    }
    at = put(batch, at, METHOD_KEY);
    at = put(batch, at, method);
    at = put(batch, at, OPERATION_KEY);
    at = put(batch, at, operation);
    at = put(batch, at, this.statusBytes(fields.status));
    at = putTenths(batch, at, ms);
    this.batches.wrote(put(batch, at, this.tail));
    return true;
  }

  /** `{"level":30,"time":<now>` + bindings + `,`: made once per millisecond, its digits rewritten in place. */
  private headOf(now: number): Buffer {
    if (now === this.headAt) return this.head;
    const digits = digitCount(now);
    if (this.head.length !== TIME_KEY.length + digits + this.afterTime.length) {
      this.head = Buffer.allocUnsafeSlow(TIME_KEY.length + digits + this.afterTime.length);
      TIME_KEY.copy(this.head, 0);
      this.afterTime.copy(this.head, TIME_KEY.length + digits);
    }
    putInteger(this.head, TIME_KEY.length, now, digits);
    this.headAt = now;
    return this.head;
  }

  /** `,"status":<status>,"ms":`, kept per status. */
  private statusBytes(status: number): Buffer {
    const known = Number.isInteger(status) && status >= 0 && status < 1000;
    const kept = known ? this.statuses[status] : undefined;
    if (kept) return kept;
    const bytes = ascii(`${STATUS_KEY.toString("latin1")}${status}${MS_KEY.toString("latin1")}`);
    if (known) this.statuses[status] = bytes;
    return bytes;
  }
}

/** Strings' UTF-8 bytes as `encode` writes them, remembered for the few a busy gateway repeats (REMEMBERED_STRINGS). */
class BytesMemo {
  private readonly kept = new Map<string, Buffer>();
  private last = "";
  private lastBytes: Buffer;

  constructor(private readonly encode: (value: string) => string) {
    this.lastBytes = Buffer.from(encode(""));
  }

  of(value: string): Buffer {
    if (value === this.last) return this.lastBytes;
    let bytes = this.kept.get(value);
    if (bytes === undefined) {
      if (this.kept.size >= REMEMBERED_STRINGS) this.kept.clear();
      bytes = Buffer.from(this.encode(value));
      this.kept.set(value, bytes);
    }
    this.last = value;
    this.lastBytes = bytes;
    return bytes;
  }
}

const POST = ascii(`"POST"`);

/** The method as JSON: POST and GET as constants, anything else bounded and escaped. */
export function methodJson(method: string): string {
  if (method === "POST") return `"POST"`;
  if (method === "GET") return `"GET"`;
  return jsonString(truncated(method, 16));
}
const COMMA = 0x2c;
const ZERO = 0x30;

/** Copies `bytes` into `batch` at `at`; short ones byte by byte, which is faster than a call. */
function put(batch: Buffer, at: number, bytes: Buffer): number {
  const length = bytes.length;
  if (length > 24) {
    batch.set(bytes, at);
    return at + length;
  }
  for (let index = 0; index < length; index += 1) batch[at + index] = bytes[index]!;
  return at + length;
}

function digitCount(value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
  return digits;
}

/** Writes a non-negative safe integer of `digits` digits at `at`. */
function putInteger(batch: Buffer, at: number, value: number, digits: number): number {
  let rest = value;
  for (let index = at + digits - 1; index >= at; index -= 1) {
    batch[index] = ZERO + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}

/** Milliseconds as tenthsOfMs writes them (`Math.round(ms * 10) / 10`), into the batch. */
function putTenths(batch: Buffer, at: number, ms: number): number {
  const tenths = Math.round(ms * 10);
  if (!(tenths >= 0 && tenths < Number.MAX_SAFE_INTEGER)) {
    const text = String(tenths / 10);
    for (let index = 0; index < text.length; index += 1) batch[at++] = text.charCodeAt(index);
    return at;
  }
  const tenth = tenths % 10;
  const whole = (tenths - tenth) / 10;
  at = putInteger(batch, at, whole, digitCount(whole));
  if (tenth === 0) return at;
  batch[at] = 0x2e;
  batch[at + 1] = ZERO + tenth;
  return at + 2;
}
