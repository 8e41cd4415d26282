/**
 * Configuration mistakes are refused at start-up with the field named and the fix said: tokens shorter than
 * 32 characters (with how to make one), a secret written where a reference belongs.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEnv } from '../../src/config/env.js';
import { loadShopRegistry } from '../../src/shops/shops.js';
import { checkEnvironment } from '../../src/ops/doctor-checks.js';
import { makeSecrets, randomHex, registryDocument, secretEnv } from '../support/relais.js';

function registryFile(document: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'relais-config-')), 'shops.json');
  writeFileSync(path, JSON.stringify(document));
  return path;
}

describe('tokens of at least 32 characters', () => {
  it('refuses a 31-character dashboard or metrics token, naming the variable and saying how to make one', () => {
    for (const name of ['RELAIS_DASHBOARD_TOKEN', 'RELAIS_METRICS_TOKEN']) {
      expect(() => readEnv({ [name]: 'x'.repeat(31) }), name).toThrow(
        new RegExp(`${name}: must be at least 32 characters: make one with \`openssl rand -hex 32\``),
      );
    }
  });

  it('relais doctor reports a short token as an error of the environment, with the command that makes one', () => {
    const { result } = checkEnvironment({ RELAIS_METRICS_TOKEN: 'short' });
    expect(result.status).toBe('error');
    expect(result.detail).toContain(
      'RELAIS_METRICS_TOKEN: must be at least 32 characters: make one with `openssl rand -hex 32`',
    );
  });

  it('accepts a token made as the message says (openssl rand -hex 32: 64 characters)', () => {
    expect(
      readEnv({ RELAIS_DASHBOARD_TOKEN: randomHex(32), RELAIS_METRICS_TOKEN: randomHex(32) }).RELAIS_DASHBOARD_TOKEN,
    ).toHaveLength(64);
  });

  it('refuses a registry whose delivery webhook token is shorter than 32 characters, naming the shop and the variable', () => {
    const env = { ...secretEnv(makeSecrets()), T_DISPATCH_WEBHOOK_TOKEN: 'short-token' };
    const path = registryFile(registryDocument({ dispatchBaseUrl: 'http://127.0.0.1:9' }));
    expect(() =>
      loadShopRegistry(path, (ref) => ('env' in ref ? env[ref.env as keyof typeof env] : undefined)),
    ).toThrow(
      /shop dakar-mode: dispatch\.webhookToken \(environment variable T_DISPATCH_WEBHOOK_TOKEN\) has 11 characters, at least 32 are required: make one with `openssl rand -hex 32`/,
    );
  });
});

describe('secret references', () => {
  it('names the field and says what a reference looks like when a secret is written in the registry itself', () => {
    const document = registryDocument({ dispatchBaseUrl: 'http://127.0.0.1:9' }) as {
      shops: { dispatch: Record<string, unknown> }[];
    };
    document.shops[0]!.dispatch = { ...document.shops[0]!.dispatch, apiKey: 'pk_live_written_in_clear' };
    expect(() => loadShopRegistry(registryFile(document), () => 'x'.repeat(40))).toThrow(
      /shops\.0\.dispatch\.apiKey: must be a secret reference, \{ "env": "VARIABLE_NAME" \} or \{ "file": "\/run\/secrets\/name" \}/,
    );
  });
});
