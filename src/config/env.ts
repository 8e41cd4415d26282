/**
 * The only reader of process.env. Every problem is collected and reported at once, so an operator
 * fixes the environment in one go instead of one restart per missing variable.
 */
import { z } from 'zod';
import { RelaisError } from '../domain/errors.js';

/** Dashboard, metrics and delivery-webhook tokens: long enough that guessing is hopeless, whatever the throttle. */
export const MIN_TOKEN_LENGTH = 32;
export const MAKE_A_TOKEN = 'make one with `openssl rand -hex 32`';
const token = z.string().min(MIN_TOKEN_LENGTH, `must be at least ${MIN_TOKEN_LENGTH} characters: ${MAKE_A_TOKEN}`);

const envObject = z.object({
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /**
   * A Redis Cluster's seed nodes, comma-separated `host:port` (or `redis[s]://[user:password@]host:port`; the first
   * entry's credentials and TLS apply to every node). Set, it replaces REDIS_URL for every process.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .trim()
    .refine(
      (value) =>
        value === '' ||
        value.split(',').every((entry) => /^(rediss?:\/\/([^@/]*@)?)?[^\s:/@,]+:\d{1,5}\/?$/.test(entry.trim())),
      'comma-separated host:port entries (or redis://[user:password@]host:port), e.g. 10.0.0.1:6379,10.0.0.2:6379',
    )
    .optional(),
  /** How long `relais web` and `relais worker` wait for Redis at start before exiting non-zero. */
  RELAIS_REDIS_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(20_000),
  /** The order ledger's PostgreSQL (src/adapters/postgres). */
  DATABASE_URL: z.string().url().default('postgres://127.0.0.1:5432/relais'),
  /** The schema holding Relais's tables. */
  RELAIS_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'lower-case letters, digits and _')
    .default('public'),
  /**
   * Keys sealing connected shops' secrets in the database (AES-256-GCM): `id:base64[,id:base64…]`, each 32 random
   * bytes (`openssl rand -base64 32`); the first encrypts, all decrypt (src/shops/secret-box.ts, `relais secrets rotate`).
   */
  RELAIS_SECRET_KEYS: z.string().min(1).optional(),
  /** How long `relais web` and `relais worker` wait for PostgreSQL at start before exiting non-zero. */
  RELAIS_DB_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(20_000),
  RELAIS_SHOPS_FILE: z.string().default('config/shops.json'),
  RELAIS_HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** The URL at which shops and the dispatch service reach the web process (for webhook registration). */
  RELAIS_PUBLIC_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Key prefix for BullMQ and Relais keys; the braces make it a Redis Cluster hash tag. */
  RELAIS_REDIS_PREFIX: z.string().default('{relais}'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(10),
  /** How long a worker holds a job before another may take it over (BullMQ lockDuration); stalled jobs are found at the same pace. */
  RELAIS_WORKER_LOCK_MS: z.coerce.number().int().min(1000).default(30_000),
  /** Bearer token for the dashboard and operator API. Unset: the dashboard is disabled. */
  RELAIS_DASHBOARD_TOKEN: token.optional(),
  /** Behind a reverse proxy: which hops to trust for X-Forwarded-For (Express 'trust proxy': 1, loopback, 10.0.0.0/8...). Unset: trust none. */
  TRUST_PROXY: z.string().trim().min(1).optional(),
  /** Reconciliation (src/orders/reconcile): how often the worker compares shop orders with shipments and repairs; 0 turns it off. */
  RELAIS_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
  // ---- retention (src/ledger/order-ledger.ts) ----
  /**
   * Days after an order finished (delivered, returned, cancelled) that its personal data (the customer's name, phone
   * and address) is erased from the ledger; its amounts, states and timeline stay for the merchant's accounts.
   */
  RELAIS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** Days after which an order with no final state is reported by `relais stale` (and may be closed there). */
  RELAIS_STALE_AFTER_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  // ---- operations (src/observability, relais doctor) ----
  /** The worker's own HTTP server for /metrics, /healthz and /readyz (bound to RELAIS_HOST); 0 picks a free port. */
  RELAIS_WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /**
   * GET /metrics requires `Authorization: Bearer <token>`. Unset: the web process's /metrics is refused, and the
   * worker's answers only when its server is bound to a loopback address.
   */
  RELAIS_METRICS_TOKEN: token.optional(),
  // ---- the operator's Shopify app (issue 17): both set, merchants install it through /connect/shopify/install ----
  /** The app's client id (Dev Dashboard, "Client credentials"). */
  SHOPIFY_API_KEY: z.string().trim().min(1).optional(),
  /** The app's client secret: the install's hmac and the installed shops' webhooks are signed with it. */
  SHOPIFY_API_SECRET: z.string().trim().min(1).optional(),
});

/** A Shopify app half configured, or without what its install needs, is reported with the rest. */
const envSchema = envObject.superRefine((env, context) => {
  const app = env.SHOPIFY_API_KEY !== undefined || env.SHOPIFY_API_SECRET !== undefined;
  const problem = (path: string, message: string) => context.addIssue({ code: 'custom', path: [path], message });
  if (!app) return;
  if (env.SHOPIFY_API_KEY === undefined)
    problem('SHOPIFY_API_KEY', "set it with SHOPIFY_API_SECRET (the app's client id)");
  if (env.SHOPIFY_API_SECRET === undefined)
    problem('SHOPIFY_API_SECRET', "set it with SHOPIFY_API_KEY (the app's client secret)");
  if (env.RELAIS_PUBLIC_URL === undefined)
    problem(
      'RELAIS_PUBLIC_URL',
      'a Shopify app needs it: Shopify redirects to <RELAIS_PUBLIC_URL>/connect/shopify/callback',
    );
  if (env.RELAIS_SECRET_KEYS === undefined)
    problem('RELAIS_SECRET_KEYS', "a Shopify app needs it: installed shops' tokens are kept sealed in the database");
});

export type RelaisEnv = z.output<typeof envSchema>;

export class EnvError extends RelaisError {
  override readonly name = 'EnvError';
  constructor(message: string) {
    super({ failure: 'permanent', message });
  }
}

export function readEnv(source: NodeJS.ProcessEnv = process.env): RelaisEnv {
  const result = envSchema.safeParse(source);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new EnvError(`invalid environment:\n${problems}`);
  }
  return result.data;
}

/** Reads one variable by name for secret references in the shop registry (still only this file touches process.env). */
export function lookupEnv(name: string, source: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = source[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The whole environment, for the few loaders that take secret references by variable name (the
 * emulators' config files). Kept here so that this file stays the only reader of process.env.
 */
export function rawEnvironment(): Readonly<Record<string, string | undefined>> {
  return process.env;
}
