/**
 * What reading a request costs its caller before Yoga parses it (src/plugins/rate-limit.ts charges
 * it): 1 for every request, plus, for a document the parse cache does not hold, `NEW_DOCUMENT_COST`
 * however small it is, 1 per `DOCUMENT_TOKENS_PER_CHARGE` of its tokens (the first
 * `FREE_DOCUMENT_TOKENS` free), 1 per `CHARACTERS_PER_TOKEN` characters, and 1 per definition
 * beyond the first (parsing and validating are work, whether or not the document then runs: a
 * new name or alias on every request makes every request a new document), and 1 per
 * `CHARACTERS_PER_TOKEN` characters of its operation name. The cache is the process's, shared by
 * all callers: a document any caller sent before pays none of it; identical new documents that
 * arrive together are each charged as new (none is parsed when they are charged). And what the
 * endpoints beside /graphql cost. Variables and extensions, whatever the document, cost 1 per
 * `CHARACTERS_PER_TOKEN` characters (`inputCost`): every one of them is read, coerced and keyed on.
 */
import { documentShape, type DocumentShape } from "./document-shape.ts";

/**
 * A new document costs 1 more per this many of its tokens beyond the first `FREE_DOCUMENT_TOKENS`,
 * and 1 per definition beyond the first: the work of parsing and validating it (some 5 ms per
 * 1,000 tokens, held on the event loop, where it delays every other caller), paid before it is
 * parsed: at the default rate a caller can make the gateway read a 2,000-token document (the
 * most MAX_QUERY_TOKENS allows) about once every 4 s. Under `FREE_DOCUMENT_TOKENS` that work is
 * about a millisecond, which `NEW_DOCUMENT_COST` pays for.
 */
export const DOCUMENT_TOKENS_PER_CHARGE = 5;
export const FREE_DOCUMENT_TOKENS = 200;

/**
 * What any new document costs beyond the 1 every request pays, however small: a request with
 * even `query Q1 { __typename }`, parsed and validated, takes about twice the CPU of one whose
 * document the cache holds (4.75 against 2.33 ms on a loaded 2-core machine:
 * test/hostile/cpu-share.test.ts), so a caller who varies a name or an alias on every request
 * (bench:hostile row 25) pays for that work, and a caller who sends the same text again does not.
 */
export const NEW_DOCUMENT_COST = 1;

/** Reading a document: a new one's own cost, its tokens beyond the free ones, its characters (a long name or comment is one token, or none, but is still read), its definitions beyond the first. */
export function costOfReading(shape: DocumentShape, characters: number): number {
  const tokens = Math.floor(Math.max(0, shape.tokens - FREE_DOCUMENT_TOKENS) / DOCUMENT_TOKENS_PER_CHARGE);
  return NEW_DOCUMENT_COST + tokens + Math.floor(characters / CHARACTERS_PER_TOKEN) + Math.max(0, shape.definitions - 1);
}

/** What parsing and validating a document costs when the parse cache does not hold it, beyond the 1 every request pays. */
export function newDocumentCost(query: string): number {
  return costOfReading(documentShape(query, Number.POSITIVE_INFINITY), query.length);
}

/** A new document, and an operation name, cost 1 more per this many characters (they are read, hashed, kept and looked up). */
export const CHARACTERS_PER_TOKEN = 1_000;

/**
 * About how many characters a parsed JSON value takes as text (strings and keys by their length,
 * every other value and every bracket as one), walked without recursion: the measure of what
 * reading, coercing and keying on it costs, whichever transport carried it.
 */
export function valueCharacters(value: unknown): number {
  let characters = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") characters += item.length + 2;
    else if (Array.isArray(item)) {
      characters += 2;
      for (const child of item) pending.push(child);
    } else if (item !== null && typeof item === "object") {
      characters += 2;
      for (const [key, child] of Object.entries(item)) {
        characters += key.length + 3;
        pending.push(child);
      }
    } else if (item !== undefined) characters += 1;
  }
  return characters;
}

/** What a request's operation name costs beyond the 1 every request pays: 1 per `CHARACTERS_PER_TOKEN` of its characters. */
export function operationNameCost(operationName: unknown): number {
  return Math.floor((typeof operationName === "string" ? operationName.length : 0) / CHARACTERS_PER_TOKEN);
}

/** What a request's variables and extensions cost beyond the 1 every request pays: 1 per `CHARACTERS_PER_TOKEN` of their characters. */
export function inputCost(variables: unknown, extensions: unknown): number {
  return Math.floor((valueCharacters(variables) + valueCharacters(extensions)) / CHARACTERS_PER_TOKEN);
}

/**
 * An answer sent from bytes the gateway holds (the GraphiQL page, a response-cache hit) costs its
 * caller 1 per this many bytes sent, rounded up, the 1 every request pays included: sending is its
 * work. At 1 unit, a cached full introspection (316 kB uncompressed) cost 1.8 ms of CPU, twelve
 * times the cheapest query; sending the GraphiQL page took 0.03 to 0.07 ms per unit, a 304 (1 unit)
 * 0.7 ms (test/hostile/cpu-share.test.ts).
 */
export const SENT_BYTES_PER_UNIT = 64 * 1024;

/** What sending `bytes` from held bytes costs in all. */
export function sendingCost(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / SENT_BYTES_PER_UNIT));
}

/** Requests whose whole body was charged for its characters as it was read (it was not usable JSON): their values are not charged again. */
const bodiesCharged = new WeakSet<object>();
export const bodyCharged = (request: object): void => void bodiesCharged.add(request);
export const wasBodyCharged = (request: object | undefined): boolean => request !== undefined && bodiesCharged.has(request);

/** What a request to an endpoint beside /graphql costs its caller. */
export const ENDPOINT_COSTS: Readonly<Record<string, number>> = { "/ready": 1, "/metrics": 10 };
