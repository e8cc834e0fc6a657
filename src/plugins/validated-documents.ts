/**
 * The documents that passed validation: the schema and the rules (the limits of the document,
 * introspection off) are fixed while the process runs, so a document that passed once passes
 * again. The listener's operation lane (src/server/operation-lane.ts) takes only such documents:
 * one that fails is answered by Yoga, with the status and counts its refusal gets there.
 */
import type { DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";

export interface ValidatedDocuments {
  /** Notes each document that validates; anywhere in the plugin list. */
  plugin: Plugin;
  has(document: DocumentNode): boolean;
}

export function validatedDocuments(): ValidatedDocuments {
  // Held through the parsed document, which the parse cache holds: gone with it.
  const valid = new WeakSet<DocumentNode>();
  return {
    plugin: {
      onValidate({ params }) {
        const document = params.documentAST;
        if (valid.has(document)) return;
        return ({ valid: passed }) => {
          if (passed) valid.add(document);
        };
      },
    },
    has: (document) => valid.has(document),
  };
}
