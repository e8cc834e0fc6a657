/**
 * What a document costs to parse and validate, read from its text in one pass and without
 * recursion, before any parser sees it: how deep its brackets nest, how many definitions
 * (operations and fragments) it holds, and about how many tokens. The same pass measures the
 * nesting of JSON text (brackets outside strings).
 */

export interface DocumentShape {
  /** Brackets (`{`, `[`, `(`) nest deeper than the depth asked about. */
  tooDeep: boolean;
  /** Selection sets at the top level: one per operation or fragment definition. */
  definitions: number;
  /** Punctuators, names, numbers and strings, as a GraphQL lexer would count them (comments and commas aside). */
  tokens: number;
}

const OPEN = new Set([0x7b, 0x5b, 0x28]); // { [ (
const CLOSE = new Set([0x7d, 0x5d, 0x29]); // } ] )
/** ! $ & : = @ | and the dots of a spread (`...` is one). */
const PUNCTUATORS = new Set([0x21, 0x24, 0x26, 0x3a, 0x3d, 0x40, 0x7c, 0x2e]);

function isWordCharacter(char: number): boolean {
  return (
    (char >= 0x30 && char <= 0x39) || // 0-9
    (char >= 0x41 && char <= 0x5a) || // A-Z
    (char >= 0x61 && char <= 0x7a) || // a-z
    char === 0x5f || // _
    char === 0x2d || // -
    char === 0x2b // +
  );
}

/** Reads `text` up to the point where its brackets nest deeper than `maxDepth` (then `tooDeep`), or to its end. */
export function documentShape(text: string, maxDepth: number): DocumentShape {
  let depth = 0;
  let definitions = 0;
  let tokens = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (OPEN.has(char)) {
      tokens++;
      if (depth === 0 && char === 0x7b) definitions++;
      if (++depth > maxDepth) return { tooDeep: true, definitions, tokens };
    } else if (CLOSE.has(char)) {
      tokens++;
      depth--;
    } else if (char === 0x22) {
      tokens++;
      if (text.startsWith('""', index + 1)) {
        // A block string ends at the first """ that no backslash escapes.
        let end = index + 3;
        while ((end = text.indexOf('"""', end)) !== -1 && text[end - 1] === "\\") end += 3;
        if (end === -1) break;
        index = end + 2;
      } else {
        while (++index < text.length) {
          const inner = text.charCodeAt(index);
          if (inner === 0x5c) index++;
          else if (inner === 0x22 || inner === 0x0a) break;
        }
      }
    } else if (char === 0x23) {
      while (index < text.length && text.charCodeAt(index) !== 0x0a && text.charCodeAt(index) !== 0x0d) index++;
    } else if (PUNCTUATORS.has(char)) {
      tokens++;
      if (char === 0x2e && text.startsWith("..", index + 1)) index += 2;
    } else if (isWordCharacter(char)) {
      tokens++;
      while (index + 1 < text.length && isWordCharacter(text.charCodeAt(index + 1))) index++;
    }
  }
  return { tooDeep: false, definitions, tokens };
}

/** True when brackets nest deeper than `max` in JSON or GraphQL text; strings, block strings and comments are skipped. */
export function nestsDeeperThan(text: string, max: number): boolean {
  return documentShape(text, max).tooDeep;
}
