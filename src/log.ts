/**
 * Structured logs (pino). Every secret-bearing field name is redacted wherever it sits, so an API key,
 * a shop token or a webhook signature never reaches a log line even when a whole object is logged.
 * Bind context with `logger.child({ shop, order, shipment, job })`.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

const SECRET_KEYS = [
  'apiKey', 'api_key', 'x-api-key', 'X-Api-Key', 'accessToken', 'access_token', 'token', 'secret', 'password',
  'webhookSecret', 'webhook_secret', 'consumerKey', 'consumer_key', 'consumerSecret', 'consumer_secret',
  'authorization', 'Authorization', 'x-shopify-hmac-sha256', 'x-wc-webhook-signature', 'x-shopify-access-token',
  'signature', 'cookie',
];

export const REDACT_PATHS = [
  ...SECRET_KEYS.map((k) => (/^[A-Za-z_]\w*$/.test(k) ? k : `["${k}"]`)),
  ...SECRET_KEYS.map((k) => (/^[A-Za-z_]\w*$/.test(k) ? `*.${k}` : `*["${k}"]`)),
  ...SECRET_KEYS.map((k) => (/^[A-Za-z_]\w*$/.test(k) ? `*.*.${k}` : `*.*["${k}"]`)),
];

export function createLogger(options: { level?: string; name?: string; destination?: pino.DestinationStream } = {}): Logger {
  const config: LoggerOptions = {
    name: options.name ?? 'relais',
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that writes nothing: for tests and tools that print their own output. */
export const silentLogger: Logger = pino({ level: 'silent' });
