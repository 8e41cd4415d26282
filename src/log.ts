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

const CENSOR = '[redacted]';
/** The deepest level each key is censored at: secrets down to the third level, personal data to the fourth. */
const CENSORED_DOWN_TO = new Map<string, number>([
  ...SECRET_KEYS.map((k) => [k, 2] as const),
  ...PERSONAL_KEYS.map((k) => [k, 3] as const),
]);

/**
 * `value` with every listed key censored at or above its level (0: the logged object's own keys; an array's items
 * are a level, as a path's `*` is), the whole value under it replaced. The logged object is never changed: what
 * holds a censored key is copied, the rest shared. One walk of the object: pino's path-based `redact` with these
 * keys behind wildcards cost about 100 µs a line.
 */
export function censored(value: unknown, depth = 0): unknown {
  if (depth > 3 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item: unknown, i) => {
      const c = censored(item, depth + 1);
      if (c !== item) (copy ??= [...value])[i] = c;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    const item = object[key];
    const down = CENSORED_DOWN_TO.get(key);
    const c = down !== undefined && depth <= down ? CENSOR : censored(item, depth + 1);
    if (c === item) continue;
    // A copy keeps what the object is (an Error stays one for pino's serializer), with its message and stack.
    copy ??= Object.assign(Object.create(Object.getPrototypeOf(object) as object | null) as object, object, {
      ...(object instanceof Error ? { message: object.message, stack: object.stack } : {}),
    }) as Record<string, unknown>;
    copy[key] = c;
  }
  return copy ?? value;
}

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
    // Every line's fields censored (see `censored`); every child's bindings too, in `censoringChildren`.
    formatters: { log: (object) => censored(object) as Record<string, unknown> },
    base: { pid: process.pid },
    mixin: () => logContext.getStore() ?? {},
  };
  return censoringChildren(options.destination ? pino(config, options.destination) : pino(config));
}

/**
 * The logger with its `child` censoring the bindings it is given (pino's bindings formatter applies to the root's
 * only). Children are made from their parent's prototype, so theirs inherit it.
 */
function censoringChildren(logger: Logger): Logger {
  const child = logger.child;
  logger.child = function censoredChild(this: Logger, bindings, options) {
    return child.call(this, censored(bindings) as pino.Bindings, options);
  } as Logger['child'];
  return logger;
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
