/**
 * What Relais writes into a Shopify order as the parcel moves, through the Admin GraphQL API.
 *
 * Every method reads the order first and writes only what is missing, so a retried job, a duplicate
 * webhook or a replay changes nothing the second time:
 *  - recordDispatch: `relais.*` metafields (shipment id, tracking code and link, the quote for accounting), the
 *    `relais:dispatched` tag (and `relais:cod`), then ONE fulfillment carrying the tracking info over what is
 *    left to fulfil. A fulfillment with our tracking number already there → nothing more. No open fulfillment
 *    order (the merchant fulfilled it by hand) → metafields and tags only, no error.
 *  - recordStep: one fulfillment event per step on our fulfillment (found by tracking number), skipped when
 *    an event with that status is already there.
 *  - markPaid: orderMarkAsPaid unless Shopify already shows the order paid.
 *  - recordProblem: the `relais:problem` tag and one line appended to the merchant's note (never twice).
 *
 * Errors are ShopifyWriteErrors (admin-errors.ts): `retryable` ones make the job run again later; the others are
 * the shop refusing (userErrors), which a retry cannot fix.
 */
import type { ShopifyShopConfig } from './settings.js';
import type { DeliveryStep } from '../../domain/shipment-status.js';
import type { Logger } from '../../log.js';
import type { DispatchInfo, ShopOrderRef, ShopWriter } from '../../shops/platforms/writer.js';
import type { StoreDeps } from '../../shops/platforms/platform.js';
import { sharedBudgetOf, shopifyAdminClientFor, type ShopifyAdminClient } from './admin.js';
import type { FulfillmentEventStatus, ShopifyOrderState } from './admin-documents.js';
import { ShopifyWriteError } from './admin-errors.js';

/**
 * Our metafields' namespace. Metafields are private to the Admin API unless a metafield definition grants
 * storefront access, and Relais creates none: that is what keeps the quote (our cost) away from the customer.
 * (An app installed from the Partner dashboard would use its app-owned namespace, `$app:relais`, which other
 * apps and the storefront cannot read at all; a merchant's custom app writes `relais`.)
 */
export const RELAIS_NAMESPACE = 'relais';

export const RELAIS_TAGS = {
  dispatched: 'relais:dispatched',
  cashOnDelivery: 'relais:cod',
  problem: 'relais:problem',
} as const;

/** Prefix of the lines Relais adds to the order note, so the merchant sees who wrote them. */
export const NOTE_PREFIX = 'Relais: ';

/** Delivery step → Shopify fulfillment event (FulfillmentEventStatus of Admin API 2026-10). */
export const FULFILLMENT_EVENT_OF_STEP: Partial<
  Record<DeliveryStep, { status: FulfillmentEventStatus; message?: string }>
> = {
  picked_up: { status: 'CARRIER_PICKED_UP' },
  in_transit: { status: 'IN_TRANSIT' },
  out_for_delivery: { status: 'OUT_FOR_DELIVERY' },
  delivered: { status: 'DELIVERED' },
  delivery_failed: { status: 'ATTEMPTED_DELIVERY' },
  returned: { status: 'FAILURE', message: 'returned to the merchant' },
  cancelled: { status: 'FAILURE', message: 'shipment cancelled' },
};

/** Fulfillment orders Shopify still lets us fulfil from. */
const FULFILLABLE_STATUSES: ReadonlySet<string> = new Set(['OPEN', 'IN_PROGRESS']);
/** Financial statuses where Relais has nothing to mark: the money is in (or was given back). */
const SETTLED_STATUSES: ReadonlySet<string> = new Set(['PAID', 'PARTIALLY_REFUNDED', 'REFUNDED']);

export function orderGid(orderId: string): string {
  return `gid://shopify/Order/${orderId}`;
}

type Fulfillment = ShopifyOrderState['fulfillments'][number];

export class ShopifyWriter implements ShopWriter {
  constructor(
    private readonly admin: ShopifyAdminClient,
    private readonly logger: Logger,
  ) {}

  async recordDispatch(order: ShopOrderRef, info: DispatchInfo): Promise<void> {
    const state = await this.read(order, 'recordDispatch');
    const id = state.id;

    const wanted = dispatchMetafields(info).filter(
      (m) =>
        !state.metafields.nodes.some(
          (have) =>
            have.namespace === RELAIS_NAMESPACE && have.key === m.key && have.type === m.type && have.value === m.value,
        ),
    );
    if (wanted.length > 0)
      await this.admin.setMetafields(wanted.map((m) => ({ ownerId: id, namespace: RELAIS_NAMESPACE, ...m })));

    const tags = info.cashOnDelivery ? [RELAIS_TAGS.dispatched, RELAIS_TAGS.cashOnDelivery] : [RELAIS_TAGS.dispatched];
    const missingTags = tags.filter((tag) => !hasTag(state, tag));
    if (missingTags.length > 0) await this.admin.addTags(id, missingTags);

    if (ourFulfillment(state, info)) return;
    const groups = openLineItems(state);
    if (groups.length === 0) {
      this.logger.info(
        { order: order.orderName },
        'nothing left to fulfil in Shopify (fulfilled by hand?); tracking kept in metafields only',
      );
      return;
    }
    try {
      await this.admin.createFulfillment({
        lineItemsByFulfillmentOrder: groups,
        trackingInfo: {
          company: info.carrierName,
          ...(info.trackingCode ? { number: info.trackingCode } : {}),
          ...(info.publicTrackingUrl ? { url: info.publicTrackingUrl } : {}),
        },
        notifyCustomer: info.notifyCustomer,
      });
    } catch (error) {
      // Refused because someone fulfilled the items meanwhile (or our own earlier attempt did): look again.
      if (!(error instanceof ShopifyWriteError) || error.userErrors.length === 0) throw error;
      const again = await this.read(order, 'recordDispatch');
      if (ourFulfillment(again, info) || openLineItems(again).length === 0) return;
      // Refused for another reason (fulfillment orders at several locations, a hold...). Failing here would
      // fail every later sync too, and with it each step and the payment; the tracking link is already in the
      // metafields, so the refusal goes on the order for the merchant and the delivery carries on.
      this.logger.warn(
        { order: order.orderName, err: error.message },
        'Shopify refused the fulfillment; written on the order as a problem',
      );
      await this.writeProblem(
        again,
        `the tracking of shipment ${info.shipmentId} could not be added as a fulfillment (${error.userErrors.map((e) => e.message).join('; ')}); fulfil the order by hand with tracking number ${info.trackingCode ?? '-'}.`,
      );
    }
  }

  async recordStep(order: ShopOrderRef, step: DeliveryStep, at: string, info: DispatchInfo): Promise<void> {
    const event = FULFILLMENT_EVENT_OF_STEP[step];
    if (!event) return;
    const state = await this.read(order, 'recordStep');
    const fulfillment = ourFulfillment(state, info);
    if (!fulfillment) {
      // recordDispatch found nothing to fulfil (the merchant fulfilled by hand): there is no fulfillment of
      // ours to carry events, and adding them to the merchant's own would put our tracking on theirs.
      this.logger.info(
        { order: order.orderName, step },
        'no Relais fulfillment on the order; step not written as an event',
      );
      return;
    }
    if (fulfillment.events.nodes.some((e) => e.status === event.status)) return;
    await this.admin.createFulfillmentEvent({
      fulfillmentId: fulfillment.id,
      status: event.status,
      happenedAt: at,
      ...(event.message ? { message: event.message } : {}),
    });
  }

  /**
   * The delivery-sync job calls this only once delivered and collected. As a last guard the writer also
   * refuses when our fulfillment already says FAILURE (returned or cancelled): cash is never recorded for a
   * parcel that came back. A cancelled order is not marked paid either; the merchant gets a note instead.
   */
  async markPaid(order: ShopOrderRef, info: DispatchInfo): Promise<void> {
    const state = await this.read(order, 'markPaid');
    if (state.displayFinancialStatus && SETTLED_STATUSES.has(state.displayFinancialStatus)) return;
    if (ourFulfillment(state, info)?.events.nodes.some((e) => e.status === 'FAILURE')) {
      throw new ShopifyWriteError({
        operation: 'markPaid',
        message: `markPaid refused for ${order.orderName}: the shipment ${info.shipmentId} failed or came back`,
        retryable: false,
      });
    }
    if (state.cancelledAt !== null) {
      await this.writeProblem(
        state,
        `the courier collected ${info.goods} XOF for shipment ${info.shipmentId}, but the order is cancelled in Shopify: it was not marked as paid.`,
      );
      return;
    }
    try {
      await this.admin.markAsPaid(state.id);
    } catch (error) {
      // "cannot be marked as paid" after a payment that landed between our read and our write: done.
      if (!(error instanceof ShopifyWriteError) || error.userErrors.length === 0) throw error;
      const again = await this.read(order, 'markPaid');
      if (again.displayFinancialStatus && SETTLED_STATUSES.has(again.displayFinancialStatus)) return;
      throw error;
    }
  }

  async recordProblem(order: ShopOrderRef, message: string): Promise<void> {
    await this.writeProblem(await this.read(order, 'recordProblem'), message);
  }

  private async writeProblem(state: ShopifyOrderState, message: string): Promise<void> {
    if (!hasTag(state, RELAIS_TAGS.problem)) await this.admin.addTags(state.id, [RELAIS_TAGS.problem]);
    // One line, on a single line; appended to whatever the merchant wrote, never twice.
    const line = `${NOTE_PREFIX}${message.replace(/\s+/g, ' ').trim()}`;
    const note = state.note ?? '';
    if (note.split(/\r?\n/).some((existing) => existing.trim() === line)) return;
    // orderUpdate replaces the whole note: the window between our read and this write is the only moment a
    // merchant's simultaneous edit could be lost.
    await this.admin.updateNote(state.id, note.trim() === '' ? line : `${note.replace(/\s+$/, '')}\n${line}`);
  }

  private async read(order: ShopOrderRef, operation: string): Promise<ShopifyOrderState> {
    const state = await this.admin.orderState(orderGid(order.orderId));
    if (!state) {
      throw new ShopifyWriteError({
        operation,
        message: `order ${order.orderName} (${order.orderId}) does not exist in the shop`,
        retryable: false,
      });
    }
    return state;
  }
}

/** The writer for a Shopify shop of the registry (its domain, token, API version and, for an emulator, adminUrl). */
export function createShopifyWriter(
  shop: ShopifyShopConfig,
  deps: Pick<StoreDeps, 'logger'> & Partial<StoreDeps>,
): ShopifyWriter {
  const logger = deps.logger.child({ shop: shop.id });
  return new ShopifyWriter(shopifyAdminClientFor(shop, { logger }, sharedBudgetOf(deps)), logger);
}

/** The relais.* metafields for a dispatch: shipment reference, tracking, and the quote (accounting only). */
export function dispatchMetafields(info: DispatchInfo): { key: string; type: string; value: string }[] {
  const fields = [{ key: 'shipment_id', type: 'single_line_text_field', value: info.shipmentId }];
  if (info.trackingCode)
    fields.push({ key: 'tracking_code', type: 'single_line_text_field', value: info.trackingCode });
  if (info.publicTrackingUrl) fields.push({ key: 'tracking_url', type: 'url', value: info.publicTrackingUrl });
  if (info.quote) {
    const breakdown = Object.fromEntries(Object.entries(info.quote.breakdown ?? {}).filter(([, v]) => v !== undefined));
    fields.push({
      key: 'quote',
      type: 'json',
      value: JSON.stringify({
        quoteId: info.quote.quoteId,
        currency: 'XOF',
        total: info.quote.total,
        breakdown,
        // What the courier collects at the door, and why: the merchant's view of every franc.
        ...(info.door
          ? {
              atDoor: {
                goods: info.door.goods,
                delivery: info.door.delivery,
                collectionFee: info.door.collectionFee,
                total: info.door.atDoor,
                deliveryPaidBy: info.door.paidBy,
              },
            }
          : {}),
      }),
    });
  }
  return fields;
}

function hasTag(state: ShopifyOrderState, tag: string): boolean {
  return state.tags.some((t) => t.toLowerCase() === tag.toLowerCase());
}

/** Our fulfillment: the one carrying our tracking number (or, without a code, our tracking link). */
function ourFulfillment(state: ShopifyOrderState, info: DispatchInfo): Fulfillment | undefined {
  return state.fulfillments.find(
    (f) =>
      f.status !== 'CANCELLED' &&
      f.trackingInfo.some((t) =>
        info.trackingCode
          ? t.number === info.trackingCode
          : info.publicTrackingUrl !== undefined && t.url === info.publicTrackingUrl,
      ),
  );
}

/** What is left to fulfil, per open fulfillment order. */
function openLineItems(
  state: ShopifyOrderState,
): { fulfillmentOrderId: string; fulfillmentOrderLineItems: { id: string; quantity: number }[] }[] {
  return state.fulfillmentOrders.nodes
    .filter((fo) => FULFILLABLE_STATUSES.has(fo.status))
    .map((fo) => ({
      fulfillmentOrderId: fo.id,
      fulfillmentOrderLineItems: fo.lineItems.nodes
        .filter((line) => line.remainingQuantity > 0)
        .map((line) => ({ id: line.id, quantity: line.remainingQuantity })),
    }))
    .filter((group) => group.fulfillmentOrderLineItems.length > 0);
}
