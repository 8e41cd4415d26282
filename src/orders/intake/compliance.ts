/**
 * Shopify's mandatory compliance topics, acted on rather than just acknowledged.
 *
 *   customers/redact   erase the personal data Relais keeps for the listed orders (each found by its key, however old)
 *   shop/redact        erase every record of the shop (48 h after uninstall), however old and however many:
 *                      the ledger walks the shop's keys (OrderLedger.eraseShop), not its bounded 90-day index
 *   customers/data_request   report what Relais holds for the customer, for the merchant to pass on
 *
 * What Relais keeps: the shop payload and the normalised order in the ledger, and the payload in
 * shop-event job data. Both are erased here; shipment ids, states and amounts stay (no personal data,
 * and the merchant's accounting needs them). Logs never carry names, phones or addresses.
 */
import type { Queue } from 'bullmq';
import { externalOrderId } from '../../domain/ids.js';
import type { OrderLedger } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import { complianceTopics } from '../../shops/platforms/index.js';
import type { ShopEventJob } from '../queues.js';

/** The platforms' data-protection topics (today Shopify's, listed with its webhooks in src/adapters/shopify/webhooks.ts). */
export const COMPLIANCE_TOPICS = complianceTopics();

export interface ComplianceDeps {
  ledger: OrderLedger;
  shopEvents: Queue<ShopEventJob>;
  logger: Logger;
}

export type ComplianceOutcome =
  { kind: 'redacted'; orders: number; jobs: number } | { kind: 'data_request'; orders: string[] };

export async function handleCompliance(
  shopId: string,
  topic: string,
  payload: unknown,
  deps: ComplianceDeps,
): Promise<ComplianceOutcome> {
  const body = (payload ?? {}) as { orders_to_redact?: unknown; orders_requested?: unknown };
  if (topic === 'customers/data_request') {
    const ids = numericIds(body.orders_requested).map((id) => externalOrderId(shopId, id));
    const records = await deps.ledger.getMany(ids);
    const held = ids.filter((_, i) => records[i] !== undefined);
    deps.logger.info({ orders: held }, 'customer data request: Relais holds delivery data for these orders');
    return { kind: 'data_request', orders: held };
  }
  if (topic === 'shop/redact') {
    const orders = await deps.ledger.eraseShop(shopId);
    const jobs = await redactJobs(deps.shopEvents, shopId, new Set(), true);
    deps.logger.info({ topic, orders, jobs }, 'every record of the shop erased');
    return { kind: 'redacted', orders, jobs };
  }
  // Shopify lists the customer's orders; the ledger has no customer id of its own to match on (the normalised
  // order keeps none), so the listed orders are what is matched, each by its key, whatever its age.
  const orderIds = numericIds(body.orders_to_redact);
  const externalIds = orderIds.map((id) => externalOrderId(shopId, id));
  const orders = await deps.ledger.redactOrders(externalIds);
  const jobs = await redactJobs(deps.shopEvents, shopId, new Set(orderIds), false);
  deps.logger.info({ topic, orders, jobs }, 'personal data erased');
  return { kind: 'redacted', orders, jobs };
}

/** Replaces the payload of every kept shop-event job about these orders (or the whole shop). */
async function redactJobs(
  queue: Queue<ShopEventJob>,
  shopId: string,
  orderIds: Set<string>,
  wholeShop: boolean,
): Promise<number> {
  let count = 0;
  const jobs = await queue.getJobs(['completed', 'failed', 'delayed', 'waiting', 'paused']);
  for (const job of jobs) {
    if (!job || job.data.shopId !== shopId || COMPLIANCE_TOPICS.has(job.data.topic)) continue;
    const id = (job.data.payload as { id?: unknown } | null)?.id;
    if (!wholeShop && !orderIds.has(String(id))) continue;
    await job.updateData({ ...job.data, payload: { id, redacted: true } });
    count += 1;
  }
  return count;
}

function numericIds(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((v) => (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^\d+$/.test(v)))
    .map(String);
}
