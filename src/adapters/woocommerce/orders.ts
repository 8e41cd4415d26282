/**
 * Reading a WooCommerce shop's orders for reconciliation: GET /wp-json/wc/v3/orders, 100 per page (the
 * REST maximum), `modified_after` in GMT, ascending ids, pages counted by X-WP-TotalPages. Each order body
 * is the REST order, which is also what `order.*` webhooks carry, so it goes to normaliseOrder and, for a
 * repair, into a replayed shop event unchanged. An order with refunds is read with what they gave back of the
 * shipping (refunds.ts), as the worker reads it, so reconciliation owes the same amount as dispatch.
 */
import type { WooShopConfig } from './settings.js';
import type { Logger } from '../../log.js';
import type { OrderWindow, ShopOrderLister, ShopOrderPage } from '../../shops/platforms/platform.js';
import type { WooRest } from './rest-types.js';
import { wooRestFor } from './writer.js';
import { wooOrderId } from './normalise.js';
import { withRefundedShipping } from './refunds.js';

/** WooCommerce's own maximum `per_page`. */
export const WOO_ORDER_PAGE_SIZE = 100;

export class WooOrderLister implements ShopOrderLister {
  constructor(
    private readonly rest: Pick<WooRest, 'listOrders' | 'getOrder' | 'listOrderRefunds'>,
    private readonly pageSize: number = WOO_ORDER_PAGE_SIZE,
  ) {}

  /** `next` is the page number to read; absent for the first page. */
  async page(window: OrderWindow, next?: string): Promise<ShopOrderPage> {
    const page = next === undefined ? 1 : Number.parseInt(next, 10);
    if (!Number.isSafeInteger(page) || page < 1) throw new TypeError(`not a page of this lister: "${next ?? ''}"`);
    const answer = await this.rest.listOrders({ page, perPage: this.pageSize, modifiedAfter: window.updatedSince });
    // The page count is re-read on every page: orders modified meanwhile can add a page, never remove one we need.
    const payloads: unknown[] = [];
    for (const order of answer.orders) payloads.push(await this.withRefunds(order));
    return { payloads, ...(page < answer.totalPages ? { next: String(page + 1) } : {}) };
  }

  /** The order body with its refunds' shipping lines; no call for an order without refunds. */
  private async withRefunds(order: unknown): Promise<unknown> {
    const id = typeof order === 'object' && order !== null ? (order as { id?: unknown }).id : undefined;
    const orderId = typeof id === 'number' || typeof id === 'string' ? wooOrderId({ id }) : undefined;
    return orderId === undefined ? order : withRefundedShipping(this.rest, orderId, order);
  }

  async order(orderId: string): Promise<unknown> {
    try {
      return await this.withRefunds(await this.rest.getOrder(orderId));
    } catch (error) {
      if ((error as { notFound?: unknown }).notFound === true) return undefined;
      throw error;
    }
  }
}

export function createWooOrderLister(shop: WooShopConfig, deps: { logger: Logger }): WooOrderLister {
  return new WooOrderLister(wooRestFor(shop, deps.logger.child({ shop: shop.id, component: 'woocommerce-orders' })));
}
