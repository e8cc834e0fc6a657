/**
 * The floor the gateway is held against: a minimal Yoga server whose one hand-written resolver
 * makes the same upstream calls as the gateway, with undici, and nothing else (no validation
 * of arguments, no loaders, no connections, no error mapping, no cache).
 */
import { createServer } from "node:http";
import { createSchema, createYoga } from "graphql-yoga";
import { referenceOperations } from "./operations/index.ts";
import { PlainUpstream } from "./upstream.ts";

const upstream = new PlainUpstream(process.env.DATA_API_URL!, process.env.METRICS_API_URL!);
const operations = new Map(
  await Promise.all(referenceOperations.map(async (operation) => [operation.name, await operation.prepare(upstream)] as const)),
);

const yoga = createYoga({
  logging: false,
  graphiql: false,
  schema: createSchema({
    typeDefs: /* GraphQL */ `
      scalar JSON
      type Query {
        run(operation: String!): JSON
      }
    `,
    resolvers: {
      Query: {
        run: (_root: unknown, args: { operation: string }) => {
          const operation = operations.get(args.operation);
          if (!operation) throw new Error(`unknown operation ${args.operation}`);
          return operation.baseline();
        },
      },
    },
  }),
});

const server = createServer(yoga);
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ event: "listening", url: `http://127.0.0.1:${address.port}/graphql` })}\n`);
});
process.on("SIGTERM", () => {
  server.close();
  void upstream.close().then(() => process.exit(0));
});
