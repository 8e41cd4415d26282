/**
 * The only calls relais probe may make, apart from probe itself (src/ops/probe.ts) so the analysis of its
 * exchanges (src/ops/probe-analysis.ts) can name the operations without importing the prober back.
 */
import { paths } from '../adapters/dispatch-api/wire.js';

/** The only operations probe may call: reads, quotes and the public price simulation. */
export const PROBE_ROUTES = {
  createQuote: { method: 'POST', host: 'base', path: () => paths.quotes },
  getQuote: { method: 'GET', host: 'base', path: (id: string) => paths.quote(id) },
  simulatePrice: { method: 'POST', host: 'tracking', path: () => paths.simulatePrice },
  listShipments: { method: 'GET', host: 'base', path: () => paths.shipments },
  getShipment: { method: 'GET', host: 'base', path: (id: string) => paths.shipment(id) },
  getShipmentByExternalOrder: { method: 'GET', host: 'base', path: (id: string) => paths.shipmentByExternalOrder(id) },
  trackByCode: { method: 'GET', host: 'tracking', path: (code: string) => paths.tracking(code) },
} as const satisfies Record<
  string,
  { method: 'GET' | 'POST'; host: 'base' | 'tracking'; path: (arg: string) => string }
>;
export type ProbeOperation = keyof typeof PROBE_ROUTES;
