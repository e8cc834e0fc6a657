/**
 * The validation of each document, kept: the schema is fixed while the process runs, and so are
 * the rules of a kind of request (the limits of the document; introspection off, a rule added
 * to requests that come through Yoga's HTTP layer), so a document validates as it did the first
 * time under as many rules. This replaces Yoga's validation cache, which keys its results by
 * the names of the rules, read anew on every request (some forty functions' names, joined).
 * The listener's operation lane (src/server/operation-lane.ts) takes only documents that passed
 * through Yoga: one that fails is answered by Yoga, with the status and counts its refusal gets there.
 */
import type { DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";

export interface ValidatedDocuments {
  /**
   * Answers validation from what a document's first validation under the same rules found.
   * After every plugin that adds a rule for some requests only (introspection's).
   */
  plugin: Plugin;
  /** Whether `document` passed validation. */
  has(document: DocumentNode): boolean;
}

export function validatedDocuments(): ValidatedDocuments {
  // Held through the parsed document, which the parse cache holds: gone with it.
  const results = new WeakMap<DocumentNode, Map<number, readonly Error[]>>();
  const passed = new WeakSet<DocumentNode>();
  return {
    plugin: {
      onValidate({ params, setResult }) {
        const document = params.documentAST;
        const rules = params.rules?.length ?? 0;
        const known = results.get(document)?.get(rules);
        if (known !== undefined) return setResult(known);
        return ({ result }) => {
          if (result == null) return;
          let byRules = results.get(document);
          if (byRules === undefined) results.set(document, (byRules = new Map()));
          byRules.set(rules, result);
          if (result.length === 0) passed.add(document);
        };
      },
    },
    has: (document) => passed.has(document),
  };
}
