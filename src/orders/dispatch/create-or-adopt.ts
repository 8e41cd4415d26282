/**
 * The create-or-adopt step: the order's one shipment, either found at the service (an earlier attempt created it
 * and never heard the answer) or created now with the goods to collect.
 */
import { DeliveryError, type Shipment } from '../../domain/delivery.js';
import { doorAmount } from '../../domain/door-amount.js';
import { xof } from '../../domain/money.js';
import type { StoreOrder } from '../../domain/order.js';
import type { QuoteProgress, ShipmentProgress } from '../../ledger/order-ledger.js';
import { shipmentRequestFor } from '../delivery/delivery-requests.js';
import type { Attempt } from './deps.js';
import { newQuote } from './quote.js';

/**
 * The shipment an earlier attempt may have created for the order, or undefined. Asked of the service only when
 * the ledger shows a createShipment may have been sent (it records that before sending one): an order for which
 * none was ever sent has no shipment to find, and its first attempt makes no lookup.
 */
export async function existingShipment(attempt: Attempt): Promise<Shipment | undefined> {
  const { record, calls } = attempt;
  if (record.shipmentRequestedAt === undefined) return undefined;
  return calls.shipmentForOrder();
}

/** Takes on a shipment an earlier attempt created, as if this one had. */
export function adopt(attempt: Attempt, existing: Shipment): ShipmentProgress {
  const shipment = saveShipment(attempt, existing, undefined);
  attempt.log.warn({ shipment: existing.shipmentId }, 'adopted a shipment created by an earlier attempt');
  attempt.writes.state('dispatching');
  return shipment;
}

/** What createShipment is sent with. */
export interface CreateInput {
  quote: QuoteProgress;
  /** The name the quote priced (a stale quote is asked again under it). */
  name: string;
  /** The order as quoted (weights filled in), for a second quote. */
  quoted(): Promise<StoreOrder>;
}

/**
 * Creates the order's shipment with the goods to collect. A quote that went stale between the steps (it expired, or
 * the service forgot it) is replaced once. The ledger records the request before it leaves (`shipmentRequested`).
 */
export async function createShipment(attempt: Attempt, input: CreateInput): Promise<ShipmentProgress> {
  const { shop, order, goods, calls, writes, log } = attempt;
  let { quote } = input;
  const create = () => calls.createShipment(shipmentRequestFor(order, quote.quoteId, goods));
  writes.shipmentRequested();
  let created: Shipment;
  try {
    created = await create();
  } catch (error) {
    if (!isStaleQuote(error)) throw error;
    log.info({ quote: quote.quoteId }, 'quote went stale before createShipment; re-quoting');
    quote = await newQuote(attempt, await input.quoted(), input.name);
    created = await create();
  }
  const shipment = saveShipment(attempt, created, undefined);
  if (goods !== undefined) {
    writes.save(
      'door',
      doorAmount(xof(goods), { total: quote.total, codFee: quote.breakdown?.codFee }, shop.policy.deliveryFeePaidBy),
    );
  }
  log.info({ shipment: created.shipmentId, amount: created.orderAmountXof }, 'shipment created');
  return shipment;
}

function isStaleQuote(error: unknown): boolean {
  return error instanceof DeliveryError && (error.reason === 'quote_expired' || error.reason === 'quote_not_found');
}

/**
 * Saves what the service said of the shipment over what was saved before. The caller passes the saved
 * progress it already holds (under the order lock nobody else writes it), so no re-read of the record.
 */
export function saveShipment(
  attempt: Attempt,
  s: Shipment | ShipmentProgress,
  previous: ShipmentProgress | undefined,
  markedReadyAt?: string,
): ShipmentProgress {
  const step = s.step ?? previous?.step;
  const progress: ShipmentProgress = {
    shipmentId: s.shipmentId,
    status: s.status,
    ...(step === undefined ? {} : { step }),
    trackingCode: s.trackingCode ?? previous?.trackingCode,
    publicTrackingUrl: s.publicTrackingUrl ?? previous?.publicTrackingUrl,
    orderAmountXof: s.orderAmountXof ?? previous?.orderAmountXof,
    markedReadyAt: markedReadyAt ?? previous?.markedReadyAt,
    createdAt: previous?.createdAt ?? s.createdAt ?? attempt.deps.now().toISOString(),
  };
  if (progress.step === undefined) attempt.deps.onUnknownState?.(attempt.shop.id, s.status);
  attempt.writes.shipment(progress);
  return progress;
}
