/**
 * The only calls relais probe may make, and the guard that refuses any other: apart from probe itself
 * (src/ops/probe.ts) so the caller (probe-caller.ts) and the analysis of its exchanges (probe-analysis.ts) can
 * name the operations without importing the prober back.
 */
import { RelaisError } from '../domain/errors.js';
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

/** An operation outside PROBE_ROUTES: refused every time, so permanent. */
export class ProbeRefusedOperation extends RelaisError {
  override readonly name = 'ProbeRefusedOperation';
  constructor(readonly operation: string) {
    super({
      failure: 'permanent',
      message: `relais probe never calls ${operation}: it may only call ${Object.keys(PROBE_ROUTES).join(', ')}`,
    });
  }
}

/**
 * The side-effect guard: the route of an allowed operation, or a throw. Every call probe makes takes its
 * method and path from here, so an operation outside the list (createShipment, markReady, cancelShipment,
 * openDispute...) cannot be sent even by mistake.
 */
export function allowedRoute(operation: string): (typeof PROBE_ROUTES)[ProbeOperation] {
  if (!Object.hasOwn(PROBE_ROUTES, operation)) throw new ProbeRefusedOperation(operation);
  return PROBE_ROUTES[operation as ProbeOperation];
}
