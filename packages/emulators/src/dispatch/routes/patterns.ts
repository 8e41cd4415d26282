/**
 * Express route patterns derived from wire.ts `paths`, so the emulator serves exactly the paths the
 * client calls: paths.shipment('__P__') → '/v1/shipments/__P__' → '/v1/shipments/:shipmentId'.
 */
import { paths } from '../../relais.js';
import type { RecordedOperation } from '../types.js';

const PLACEHOLDER = '__P__';
const withParam = (build: (value: string) => string, name: string) =>
  build(PLACEHOLDER).replace(PLACEHOLDER, `:${name}`);

export const routes = {
  quotes: paths.quotes,
  quote: withParam(paths.quote, 'quoteId'),
  shipments: paths.shipments,
  shipment: withParam(paths.shipment, 'shipmentId'),
  shipmentByExternalOrder: withParam(paths.shipmentByExternalOrder, 'externalOrderId'),
  markReady: withParam(paths.markReady, 'shipmentId'),
  cancel: withParam(paths.cancel, 'shipmentId'),
  openDispute: withParam(paths.openDispute, 'shipmentId'),
  disputes: withParam(paths.disputes, 'shipmentId'),
  simulatePrice: paths.simulatePrice,
  tracking: withParam(paths.tracking, 'trackingCode'),
  trackingPage: '/t/:trackingCode',
} as const;

type Method = 'GET' | 'POST';
const OPERATION_TABLE: readonly [Method, string, RecordedOperation][] = [
  ['POST', routes.quotes, 'createQuote'],
  ['GET', routes.quote, 'getQuote'],
  ['POST', routes.shipments, 'createShipment'],
  ['GET', routes.shipments, 'listShipments'],
  ['GET', routes.shipmentByExternalOrder, 'getShipmentByExternalOrder'],
  ['GET', routes.shipment, 'getShipment'],
  ['POST', routes.markReady, 'markReady'],
  ['POST', routes.cancel, 'cancelShipment'],
  ['POST', routes.openDispute, 'openDispute'],
  ['GET', routes.disputes, 'listShipmentDisputes'],
  ['POST', routes.simulatePrice, 'simulatePrice'],
  ['GET', routes.tracking, 'trackByCode'],
  ['GET', routes.trackingPage, 'trackingPage'],
];
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const COMPILED = OPERATION_TABLE.map(
  ([method, pattern, name]) =>
    [
      method,
      new RegExp(
        `^${pattern
          .split(/(:\w+)/)
          .map((part) => (part.startsWith(':') ? '[^/]+' : escapeRegExp(part)))
          .join('')}/?$`,
      ),
      name,
    ] as const,
);

/**
 * The operation a request is for, known on arrival: so that a call refused before routing (malformed
 * JSON, oversized body) is still recorded under its operation, not as 'unknown'.
 */
export function operationFor(method: string, path: string): RecordedOperation {
  return COMPILED.find(([m, regex]) => m === method && regex.test(path))?.[2] ?? 'unknown';
}
