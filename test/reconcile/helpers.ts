/**
 * Helpers of the reconciliation tests: the `relais` command line as a child process, an RFC 4180 CSV reader,
 * and shipments made behind Relais's back (straight through the dispatch client with the organisation's key).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DispatchClient } from '../../src/adapters/dispatch-api/client.js';
import type { WireShipment } from '../../src/adapters/dispatch-api/wire.js';
import type { TestRelais } from '../support/relais.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `relais <args>` as an operator runs it, against the test Relais's Redis, registry and secrets. */
export function runCli(relais: TestRelais, args: string[]): Promise<CliResult> {
  const dir = mkdtempSync(join(tmpdir(), 'relais-reconcile-'));
  const registry = join(dir, 'shops.json');
  writeFileSync(registry, JSON.stringify(relais.registryDocument));
  return new Promise((resolve) => {
    execFile(
      join(process.cwd(), 'node_modules/.bin/tsx'),
      ['src/main/cli.ts', ...args],
      {
        cwd: process.cwd(),
        env: {
          PATH: `${join(process.cwd(), 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
          ...relais.env,
          REDIS_URL: relais.redis.url,
          RELAIS_SHOPS_FILE: registry,
          RELAIS_REDIS_PREFIX: relais.prefix,
          LOG_LEVEL: 'silent',
        },
        timeout: 60_000,
        maxBuffer: 10 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** RFC 4180: quoted fields with doubled quotes, commas and line breaks inside quotes, CRLF or LF rows. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') {
        quoted = false;
      } else {
        field += char;
      }
    } else if (char === '"' && field === '') {
      quoted = true;
    } else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += char;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** A shipment made straight through the dispatch service, as another tool with the same key would. */
export async function shipmentBehindRelaisBack(
  relais: TestRelais,
  externalOrderId: string,
  options: { orderAmountXof?: number; markReady?: boolean },
): Promise<WireShipment> {
  const client = new DispatchClient({ baseUrl: relais.emulator.baseUrl, apiKey: relais.secrets.dispatchApiKey });
  try {
    const quote = await client.createQuote({
      pickup: { city: 'Plateau', address: '12 avenue Léopold Sédar Senghor' },
      dropoff: { city: 'Sicap Liberté', address: 'Villa 12, Sicap Liberté 2' },
      payment_mode: options.orderAmountXof === undefined ? 'prepaid' : 'cash_on_delivery',
    });
    const shipment = await client.createShipment({
      quote_id: quote.quoteId,
      external_order_id: externalOrderId,
      ...(options.orderAmountXof === undefined ? {} : { orderAmountXof: options.orderAmountXof }),
    });
    return options.markReady ? await client.markReady(shipment.shipmentId, 'a colleague, by hand') : shipment;
  } finally {
    await client.close();
  }
}
