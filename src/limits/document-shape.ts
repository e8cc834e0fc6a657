/**
 * What a document costs to parse and validate, read from its text in one pass and without
 * recursion, before any parser sees it: how deep its brackets nest, how many definitions
 * (operations and fragments) it holds, and about how many tokens. The same pass measures the
 * nesting of JSON text (brackets outside strings).
 */

export interface DocumentShape {
  /** Brackets (`{`, `[`, `(`) nest deeper than the depth asked about. */
  tooDeep: boolean;
  /** The deepest the brackets nest, as far as the text was read. */
  depth: number;
  /** Selection sets at the top level: one per operation or fragment definition. */
  definitions: number;
  /** Punctuators, names, numbers and strings, as a GraphQL lexer would count them (comments and commas aside). */
  tokens: number;
}

const OTHER = 0;
const OPEN = 1; // { [ (
const CLOSE = 2; // } ] )
const QUOTE = 3;
const COMMENT = 4; // #
const PUNCTUATOR = 5; // ! $ & : = @ | and the dots of a spread (`...` is one)
const WORD = 6; // names and numbers: A-Z a-z 0-9 _ - +

/** The class of each ASCII character; everything else (whitespace, commas, non-ASCII) is OTHER. */
const CLASSES = new Uint8Array(128);
for (const char of "{[(") CLASSES[char.charCodeAt(0)] = OPEN;
for (const char of "}])") CLASSES[char.charCodeAt(0)] = CLOSE;
CLASSES[0x22] = QUOTE;
CLASSES[0x23] = COMMENT;
for (const char of "!$&:=@|.") CLASSES[char.charCodeAt(0)] = PUNCTUATOR;
for (const char of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+") CLASSES[char.charCodeAt(0)] = WORD;

function classOf(char: number): number {
  return char < 128 ? CLASSES[char]! : OTHER;
}

/** Reads `text` up to the point where its brackets nest deeper than `maxDepth` (then `tooDeep`), or to its end. */
export function documentShape(text: string, maxDepth: number): DocumentShape {
  let depth = 0;
  let deepest = 0;
  let definitions = 0;
  let tokens = 0;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const char = text.charCodeAt(index);
    switch (classOf(char)) {
      case OPEN:
        tokens++;
        if (depth === 0 && char === 0x7b) definitions++;
        if (++depth > deepest) deepest = depth;
        if (depth > maxDepth) return { tooDeep: true, depth: deepest, definitions, tokens };
        break;
      case CLOSE:
        tokens++;
        depth--;
        break;
      case QUOTE:
        tokens++;
        if (text.startsWith('""', index + 1)) {
          // A block string ends at the first """ that no backslash escapes.
          let end = index + 3;
          while ((end = text.indexOf('"""', end)) !== -1 && text[end - 1] === "\\") end += 3;
          if (end === -1) return { tooDeep: false, depth: deepest, definitions, tokens };
          index = end + 2;
        } else {
          while (++index < length) {
            const inner = text.charCodeAt(index);
            if (inner === 0x5c) index++;
            else if (inner === 0x22 || inner === 0x0a) break;
          }
        }
        break;
      case COMMENT:
        while (index < length && text.charCodeAt(index) !== 0x0a && text.charCodeAt(index) !== 0x0d) index++;
        break;
      case PUNCTUATOR:
        tokens++;
        if (char === 0x2e && text.startsWith("..", index + 1)) index += 2;
        break;
      case WORD:
        tokens++;
        while (index + 1 < length && classOf(text.charCodeAt(index + 1)) === WORD) index++;
        break;
    }
  }
  return { tooDeep: false, depth: deepest, definitions, tokens };
}

const shapes = new WeakMap<object, { query: string; shape: DocumentShape }>();

/**
 * The shape of a request's document, read once however many plugins ask (the rate limit for its
 * cost, the refusals for its depth): kept per request, with no depth bound.
 */
export function documentShapeOf(request: object, query: string): DocumentShape {
  const known = shapes.get(request);
  if (known?.query === query) return known.shape;
  const shape = documentShape(query, Number.POSITIVE_INFINITY);
  shapes.set(request, { query, shape });
  return shape;
}

/** True when brackets nest deeper than `max` in JSON or GraphQL text; strings, block strings and comments are skipped. */
export function nestsDeeperThan(text: string, max: number): boolean {
  return documentShape(text, max).tooDeep;
}

/** True when arrays and objects nest deeper than `max` in a parsed value; walked without recursion. */
export function valueNestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return false;
}
