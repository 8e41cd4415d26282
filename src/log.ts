/**
 * Structured logs (pino). Every secret-bearing field name is redacted wherever it sits, so an API key,
 * a shop token or a webhook signature never reaches a log line even when a whole object is logged; so is
 * every field that carries a customer's personal data (names, phones, emails, address lines, whole
 * addresses and customers), down to four levels deep. Messages are text: code never puts personal data
 * in them (test/pipeline/pii-logs.test.ts greps a run's logs for the fixtures' customers).
 * Bind context with `logger.child({ shop, order, shipment, job })`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

const SECRET_KEYS = [
  'apiKey',
  'api_key',
  'x-api-key',
  'X-Api-Key',
  'accessToken',
  'access_token',
  'token',
  'secret',
  'password',
  'webhookSecret',
  'webhook_secret',
  'consumerKey',
  'consumer_key',
  'consumerSecret',
  'consumer_secret',
  'authorization',
  'Authorization',
  'x-shopify-hmac-sha256',
  'x-wc-webhook-signature',
  'x-shopify-access-token',
  'signature',
  'cookie',
];

/** Fields that hold a customer's personal data, as Shopify, WooCommerce, the dispatch API and Relais name them. */
const PERSONAL_KEYS = [
  'address',
  'address1',
  'address2',
  'address_1',
  'address_2',
  'street',
  'fields',
  'dropoff',
  'destination',
  'shipping_address',
  'billing_address',
  'shipping',
  'billing',
  'default_address',
  'customer',
  'phone',
  'contactPhone',
  'contact_phone',
  'recipient_phone',
  'recipientPhone',
  'email',
  'contact_email',
  'contactEmail',
  'first_name',
  'last_name',
  'firstName',
  'lastName',
  'contactName',
  'contact_name',
  'recipient_name',
  'recipientName',
  'note',
  'customer_note',
  'coords',
  'latitude',
  'longitude',
];

const pathOf = (k: string, depth: number) =>
  `${'*.'.repeat(depth)}${/^[A-Za-z_]\w*$/.test(k) ? k : `["${k}"]`}`.replace(/\.\[/g, '[');

export const REDACT_PATHS = [
  ...[0, 1, 2].flatMap((depth) => SECRET_KEYS.map((k) => pathOf(k, depth))),
  ...[0, 1, 2, 3].flatMap((depth) => PERSONAL_KEYS.map((k) => pathOf(k, depth))),
];

/**
 * Context added to every log line written while it is set: the web process runs each request in
 * `logContext.run({ requestId }, ...)`, so every line a request causes carries its id, whichever module logs it.
 */
export const logContext = new AsyncLocalStorage<Readonly<Record<string, string>>>();

export function createLogger(
  options: { level?: string; name?: string; destination?: pino.DestinationStream } = {},
): Logger {
  const config: LoggerOptions = {
    name: options.name ?? 'relais',
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
    mixin: () => logContext.getStore() ?? {},
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that writes nothing: for tests and tools that print their own output. */
export const silentLogger: Logger = pino({ level: 'silent' });

/** A connection URL fit for a message: its password masked. `setting` names it when it does not parse. */
export function urlForHumans(url: string, setting: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return `(an unparsable ${setting})`;
  }
}
