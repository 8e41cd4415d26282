/**
 * Shopify's real Admin GraphQL schema, as published in the npm package @shopify/dev-mcp
 * (`dist/data/admin_<version>.json.gz`, an introspection result). Every document the emulator receives is
 * validated against it and executed on it, so a query Relais sends to the emulator is a query Shopify accepts.
 *
 * Loading costs a few hundred milliseconds (gunzip 11 MB of JSON, parse, buildClientSchema), so it happens
 * once per process and version, lazily, and every emulator in the process shares the result.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, parse as parsePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import {
  buildClientSchema,
  GraphQLError,
  isScalarType,
  Kind,
  type GraphQLSchema,
  type IntrospectionQuery,
} from 'graphql';

const gunzipAsync = promisify(gunzip);

export const DEFAULT_ADMIN_API_VERSION = '2026-10';

export interface AdminSchema {
  version: string;
  schema: GraphQLSchema;
  /** Where it was read from, and how long each step took: reported by tests and tools. */
  file: string;
  loadTimings: { readMs: number; gunzipMs: number; parseMs: number; buildMs: number; totalMs: number };
}

const cache = new Map<string, Promise<AdminSchema>>();

/** Loads (once per process) the Admin schema for `version`. `schemaFile` overrides where it is read from. */
export function loadAdminSchema(
  version: string = DEFAULT_ADMIN_API_VERSION,
  schemaFile?: string,
): Promise<AdminSchema> {
  const file = schemaFile ?? findAdminSchemaFile(version);
  const key = `${version}\u0000${file}`;
  let loading = cache.get(key);
  if (!loading) {
    loading = readSchema(version, file);
    // A failed load must not poison the cache: the next caller tries again and sees the real error.
    loading.catch(() => cache.delete(key));
    cache.set(key, loading);
  }
  return loading;
}

async function readSchema(version: string, file: string): Promise<AdminSchema> {
  const started = performance.now();
  const compressed = await readFile(file);
  const read = performance.now();
  const raw = await gunzipAsync(compressed);
  const unzipped = performance.now();
  const parsed: unknown = JSON.parse(raw.toString('utf8'));
  const parsedAt = performance.now();
  const introspection = introspectionOf(parsed, file);
  const schema = buildClientSchema(introspection, { assumeValid: true });
  tightenScalars(schema);
  const built = performance.now();
  return {
    version,
    schema,
    file,
    loadTimings: {
      readMs: round(read - started),
      gunzipMs: round(unzipped - read),
      parseMs: round(parsedAt - unzipped),
      buildMs: round(built - parsedAt),
      totalMs: round(built - started),
    },
  };
}

function introspectionOf(parsed: unknown, file: string): IntrospectionQuery {
  // The package wraps the introspection result as `{ data: { __schema }, offline_scopes }`.
  const candidate = isRecord(parsed) && isRecord(parsed['data']) ? parsed['data'] : parsed;
  if (!isRecord(candidate) || !isRecord(candidate['__schema'])) {
    throw new Error(`${file} is not a GraphQL introspection result (no __schema)`);
  }
  return candidate as unknown as IntrospectionQuery;
}

/**
 * A client schema treats custom scalars as "anything goes". Shopify does not: a malformed DateTime is
 * refused while coercing variables, before any resolver runs. URL is deliberately left loose because
 * Shopify reports bad tracking URLs as userErrors of the mutation, which the resolvers do.
 */
function tightenScalars(schema: GraphQLSchema): void {
  const dateTime = schema.getType('DateTime');
  if (isScalarType(dateTime)) {
    dateTime.parseValue = (value: unknown) => parseDateTime(value);
    dateTime.parseLiteral = (ast) => {
      if (ast.kind !== Kind.STRING) throw new GraphQLError(`Invalid DateTime: expected an ISO 8601 string`);
      return parseDateTime(ast.value);
    };
  }
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function parseDateTime(value: unknown): string {
  if (typeof value !== 'string' || !ISO_8601.test(value) || Number.isNaN(Date.parse(value))) {
    throw new GraphQLError(`Invalid DateTime: ${JSON.stringify(value)} is not an ISO 8601 date and time`);
  }
  return value;
}

/**
 * Finds `node_modules/@shopify/dev-mcp/dist/data/admin_<version>.json.gz` walking up from this module and
 * from the working directory (the package's `exports` map hides its files from require.resolve).
 */
export function findAdminSchemaFile(version: string): string {
  const relative = join('node_modules', '@shopify', 'dev-mcp', 'dist', 'data', `admin_${version}.json.gz`);
  const starts = [dirname(fileURLToPath(import.meta.url)), process.cwd()];
  for (const start of starts) {
    let dir = start;
    for (;;) {
      const candidate = join(dir, relative);
      if (existsSync(candidate)) return candidate;
      const parent = dirname(dir);
      if (parent === dir || dir === parsePath(dir).root) break;
      dir = parent;
    }
  }
  throw new Error(
    `Shopify Admin schema ${version} not found (looked for ${relative} above ${starts.join(' and ')}). ` +
      'Install @shopify/dev-mcp or pass schemaFile.',
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
