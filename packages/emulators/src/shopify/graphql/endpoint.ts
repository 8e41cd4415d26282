/**
 * One Admin GraphQL request, the way Shopify answers it: parse, validate against the real schema, price
 * the query, charge the shop's bucket (or answer THROTTLED), execute, refund the difference between
 * requested and actual cost, and report the cost in `extensions.cost`. HTTP status is 200 for everything
 * GraphQL itself rejects (syntax, validation, throttling); transport problems are 4xx.
 */
import {
  execute,
  getOperationAST,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { z } from 'zod';
import { MAX_SINGLE_QUERY_COST, operationCost } from '../cost.js';
import type { ShopEvent } from '../model.js';
import type { ShopStore } from '../store.js';
import type { CostBucket, ThrottleStatus } from '../throttle.js';
import { toShopifyValidationError, type ShopifyGraphqlError } from './errors.js';
import { createRootValue, type RequestContext } from './resolvers.js';
import { strictFieldResolver } from './views.js';

export const graphqlBodySchema = z.object({
  query: z.string().min(1),
  variables: z.record(z.string(), z.unknown()).nullish(),
  operationName: z.string().nullish(),
});

export type GraphqlBody = z.infer<typeof graphqlBodySchema>;

export interface CostExtension {
  requestedQueryCost: number;
  actualQueryCost: number | null;
  throttleStatus: ThrottleStatus;
}

export interface GraphqlAnswer {
  status: number;
  body: Record<string, unknown>;
  /** What was decided, for the call log. */
  outcome: 'ok' | 'invalid' | 'throttled' | 'max_cost_exceeded';
  operationType: 'query' | 'mutation' | 'subscription' | null;
  operationName: string | null;
  rootFields: string[];
  cost: CostExtension | null;
  events: ShopEvent[];
}

/** A parsed, validated document, cached by query text: clients send the same few documents again and again. */
interface PreparedDocument {
  document?: DocumentNode;
  errors?: ShopifyGraphqlError[];
  fragments: Map<string, FragmentDefinitionNode>;
}

const PREPARED_LIMIT = 500;

export const THROTTLED_DOCUMENTATION = 'https://shopify.dev/api/usage/rate-limits';

export class GraphqlEndpoint {
  private readonly prepared = new Map<string, PreparedDocument>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly apiVersion: string,
  ) {}

  /** Parses and validates a document, or returns Shopify-shaped errors. */
  prepare(query: string): PreparedDocument {
    const cached = this.prepared.get(query);
    if (cached) return cached;
    let prepared: PreparedDocument;
    try {
      const document = parse(query);
      const errors = validate(this.schema, document);
      const fragments = new Map(
        document.definitions
          .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
          .map((d) => [d.name.value, d]),
      );
      prepared =
        errors.length > 0
          ? { errors: errors.map((error) => toShopifyValidationError(error, document)), fragments }
          : { document, fragments };
    } catch (error) {
      prepared = { errors: [syntaxError(error)], fragments: new Map() };
    }
    if (this.prepared.size >= PREPARED_LIMIT) {
      const oldest = this.prepared.keys().next();
      if (!oldest.done) this.prepared.delete(oldest.value);
    }
    this.prepared.set(query, prepared);
    return prepared;
  }

  /** The operation a body names, with its root fields (used by fault filters before executing). */
  describe(body: GraphqlBody): { operation: OperationDefinitionNode | null; prepared: PreparedDocument } {
    const prepared = this.prepare(body.query);
    const operation = prepared.document
      ? (getOperationAST(prepared.document, body.operationName ?? undefined) ?? null)
      : null;
    return { operation, prepared };
  }

  async answer(
    body: GraphqlBody,
    store: ShopStore,
    bucket: CostBucket,
    options: { forceThrottle?: boolean } = {},
  ): Promise<GraphqlAnswer> {
    const { operation, prepared } = this.describe(body);
    const base = {
      operationType: operation?.operation ?? null,
      operationName: operation?.name?.value ?? body.operationName ?? null,
      rootFields: operation ? rootFieldsOf(operation) : [],
      events: [] as ShopEvent[],
    };
    if (!prepared.document || prepared.errors) {
      return { ...base, status: 200, outcome: 'invalid', cost: null, body: { errors: prepared.errors ?? [] } };
    }
    if (!operation) {
      const message = body.operationName
        ? `No operation named "${body.operationName}"`
        : 'An operation name is required';
      return { ...base, status: 200, outcome: 'invalid', cost: null, body: { errors: [{ message }] } };
    }
    const variables = body.variables ?? {};
    const requested = operationCost(this.schema, operation, prepared.fragments, variables);
    if (requested > MAX_SINGLE_QUERY_COST) {
      const cost = { requestedQueryCost: requested, actualQueryCost: null, throttleStatus: bucket.status() };
      return {
        ...base,
        status: 200,
        outcome: 'max_cost_exceeded',
        cost,
        body: {
          errors: [
            {
              message:
                `Query cost is ${requested}, which exceeds the single query max cost limit (${MAX_SINGLE_QUERY_COST}).\n\n` +
                'See https://shopify.dev/concepts/about-apis/rate-limits for more information on how the\n' +
                'cost of a query is calculated.\n\n' +
                'To query larger amounts of data with fewer limits, bulk operations should be used instead.\n' +
                'See https://shopify.dev/tutorials/perform-bulk-operations-with-admin-api for usage details.\n',
              extensions: { code: 'MAX_COST_EXCEEDED', cost: requested, maxCost: MAX_SINGLE_QUERY_COST },
            },
          ],
          extensions: { cost },
        },
      };
    }
    if (options.forceThrottle || !bucket.tryTake(requested)) {
      const cost = { requestedQueryCost: requested, actualQueryCost: null, throttleStatus: bucket.status() };
      return {
        ...base,
        status: 200,
        outcome: 'throttled',
        cost,
        body: {
          errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: THROTTLED_DOCUMENTATION } }],
          extensions: { cost },
        },
      };
    }

    const events: ShopEvent[] = [];
    const context: RequestContext = {
      store,
      apiVersion: this.apiVersion,
      emit: (more) => events.push(...more),
      searchWarnings: [],
    };
    const result = await execute({
      schema: this.schema,
      document: prepared.document,
      rootValue: createRootValue(context),
      contextValue: context,
      variableValues: variables,
      operationName: body.operationName ?? undefined,
      fieldResolver: strictFieldResolver,
    });
    const actual = result.data ? operationCost(this.schema, operation, prepared.fragments, variables, result.data) : 0;
    bucket.refund(requested - Math.min(actual, requested));
    const cost: CostExtension = {
      requestedQueryCost: requested,
      actualQueryCost: Math.min(actual, requested),
      throttleStatus: bucket.status(),
    };
    const response: Record<string, unknown> = {};
    if (result.errors && result.errors.length > 0) response['errors'] = result.errors.map((error) => error.toJSON());
    if (result.data !== undefined) response['data'] = result.data;
    const extensions: Record<string, unknown> = { cost };
    if (context.searchWarnings.length > 0) extensions['search'] = context.searchWarnings;
    response['extensions'] = extensions;
    return { ...base, status: 200, outcome: 'ok', cost, body: response, events };
  }
}

function rootFieldsOf(operation: OperationDefinitionNode): string[] {
  return operation.selectionSet.selections.flatMap((selection) =>
    selection.kind === Kind.FIELD ? [selection.name.value] : [],
  );
}

function syntaxError(error: unknown): ShopifyGraphqlError {
  const graphqlError = error as Partial<GraphQLError>;
  const shaped: ShopifyGraphqlError = { message: graphqlError.message ?? String(error) };
  if (graphqlError.locations) shaped.locations = graphqlError.locations.map(({ line, column }) => ({ line, column }));
  return shaped;
}
