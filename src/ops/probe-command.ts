/**
 * `relais probe --shop <id>`: runs the probe (probe.ts) for one shop of the registry and prints its report.
 * Exit status: 0 when the probe ran (unknown names found are a result, not a failure); 2 when it could not
 * run (the service did not answer, or refused the key); 1 for a usage error (no such shop).
 */
import { join } from 'node:path';
import type { ShopRegistry } from '../shops/shops.js';
import { ProbeFailure, runProbe } from './probe.js';
import { renderProbeReport } from './probe-report.js';

export interface ProbeCommandOptions {
  shop: string;
  shipment?: string;
  externalOrder?: string;
  trackingCode?: string;
  out?: string;
}

interface Output {
  write(text: string): unknown;
}

export async function runProbeCommand(
  shops: ShopRegistry,
  options: ProbeCommandOptions,
  io: { stdout: Output; stderr: Output },
  now: () => Date = () => new Date(),
): Promise<number> {
  const shop = shops.get(options.shop);
  if (!shop) {
    io.stderr.write(
      `relais probe: no shop "${options.shop}" in the registry (known: ${
        shops
          .all()
          .map((s) => s.id)
          .join(', ') || 'none'
      })\n`,
    );
    return 1;
  }
  const stamp = now()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const outDir = options.out ?? join('relais-probe', `${shop.id}-${stamp}`);
  try {
    const report = await runProbe({
      shop,
      outDir,
      now,
      ...(options.shipment ? { shipmentId: options.shipment } : {}),
      ...(options.externalOrder ? { externalOrderId: options.externalOrder } : {}),
      ...(options.trackingCode ? { trackingCode: options.trackingCode } : {}),
    });
    io.stdout.write(renderProbeReport(report));
    return 0;
  } catch (error) {
    if (!(error instanceof ProbeFailure)) throw error;
    io.stderr.write(
      `relais probe: ${error.message}${error.exchangesFile ? `\n  the exchange is saved in ${error.exchangesFile} (key redacted)` : ''}\n`,
    );
    return 2;
  }
}
