/**
 * A secret value (API key, shop token, webhook secret). It prints as "[secret]" however it is logged,
 * stringified or inspected, so a whole config object can be logged without leaking it. Code that needs
 * the value calls `reveal()` at the last moment (an HTTP header, an HMAC key).
 */
import { inspect } from 'node:util';
import { z } from 'zod';

/**
 * How a registry names a secret: `{ "env": "VAR_NAME" }` or `{ "file": "/run/secrets/name" }`, never the value.
 * src/shops/shops.ts resolves each reference to a Secret when the registry is loaded.
 */
export const secretRef = z.union(
  [
    z.object({ env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name') }).strict(),
    z.object({ file: z.string().min(1) }).strict(),
    // A connected shop's secret, sealed in the database (src/shops/shop-secrets.ts) under this name.
    z.object({ stored: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, "a stored secret's name") }).strict(),
  ],
  {
    error:
      'must be a secret reference, { "env": "VARIABLE_NAME" } or { "file": "/run/secrets/name" }, never the secret itself',
  },
);
export type SecretRef = z.infer<typeof secretRef>;

export class Secret {
  readonly #value: string;
  /** Where the value came from ("env RELAIS_X", "file /run/secrets/x"), safe to show. */
  readonly source: string;

  constructor(value: string, source: string) {
    this.#value = value;
    this.source = source;
  }

  reveal(): string {
    return this.#value;
  }

  /** A short non-reversible hint (prefix) for doctor output: "pk_live_…". */
  hint(): string {
    const prefix = /^(pk_live_|pk_test_|shpat_|ck_|cs_)/.exec(this.#value)?.[1];
    return prefix ? `${prefix}…` : '…';
  }

  toString(): string {
    return '[secret]';
  }
  toJSON(): string {
    return '[secret]';
  }
  [inspect.custom](): string {
    return `[secret from ${this.source}]`;
  }
}
