import { readFileSync } from "node:fs";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// Both packages are CommonJS with a `default` property; under NodeNext the class is that property.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

type Service = "data" | "metrics";

interface Document {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }>
  >;
  components: { schemas: Record<string, unknown> };
}

const FILES: Record<Service, string> = { data: "data-api.json", metrics: "metrics-api.json" };

function load(service: Service): Document {
  const url = new URL(`../../src/upstream/contract/${FILES[service]}`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Document;
}

/** Validates bodies against the contract's response schemas, with every `#/components/schemas/...` reference resolvable. */
export class ContractSchemas {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly documents = { data: load("data"), metrics: load("metrics") };

  constructor() {
    addFormats(this.ajv);
    for (const service of ["data", "metrics"] as const) {
      this.ajv.addSchema({ $id: this.baseId(service), components: this.documents[service].components });
    }
  }

  /** The errors of `body` against the schema of that route and status, or [] when it conforms. */
  responseErrors(service: Service, method: string, template: string, status: number, body: unknown): string[] {
    const operation = this.documents[service].paths[template]?.[method.toLowerCase()];
    if (operation === undefined) throw new Error(`${method} ${template} is not in the ${service} contract`);
    const schema = operation.responses[String(status)]?.content?.["application/json"]?.schema;
    if (schema === undefined) throw new Error(`${method} ${template} has no JSON schema for status ${status}`);
    const ref = schema.$ref;
    // A schema written in place (a oneOf of components) refers to components of the same document.
    const inlineId = `https://contract.simulator.test/inline/${encodeURIComponent(`${service} ${method} ${template} ${status}`)}`;
    if (ref === undefined && this.ajv.getSchema(inlineId) === undefined) {
      const absolute = JSON.stringify(schema).replaceAll('"#/components/', `"${this.baseId(service)}#/components/`);
      this.ajv.addSchema(JSON.parse(absolute), inlineId);
    }
    const validate = this.ajv.getSchema(ref === undefined ? inlineId : `${this.baseId(service)}${ref}`);
    if (validate === undefined) throw new Error(`cannot resolve ${ref}`);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""}`);
  }

  /** The properties that a component schema of the contract declares. */
  schemaProperties(service: Service, name: string): string[] {
    const schema = this.documents[service].components.schemas[name] as { properties?: Record<string, unknown> };
    return Object.keys(schema.properties ?? {});
  }

  private baseId(service: Service): string {
    return `https://contract.simulator.test/${service}-api.json`;
  }
}
