/**
 * A stateless stand-in for a Shopify shop's Admin GraphQL API, so the write-back after markReady
 * (order read, metafields, tags, fulfillment with tracking) and after delivery (mark as paid) runs to completion
 * at flash-sale volume. Keeping no state, it never shows the order with Relais's fulfillment, so the courier's
 * steps are not written as fulfillment events (Relais logs "no Relais fulfillment on the order" and goes on).
 *
 * Why not the Shopify emulator (packages/emulators/src/shopify): it validates every document against the full
 * Admin schema, applies Shopify's cost throttle, and keeps every call and order in memory, which is what
 * tests want and what a 100,000-order run cannot afford. Every order here is an open, unfulfilled order
 * with one line item; each mutation succeeds. Relais still sends its real documents through its real
 * client (@shopify/shopify-api), over HTTP on 127.0.0.1.
 */
import type { Server } from 'node:http';
import express from 'express';
import { z } from 'zod';
import { orderListingPage } from './shop-order-listing.js';

export interface ShopAdminStub {
  url: string;
  /** Requests answered, by GraphQL operation name. */
  calls(): Record<string, number>;
  close(): Promise<void>;
}

const graphqlRequest = z.object({ query: z.string(), variables: z.record(z.string(), z.unknown()).optional() });

const COST = {
  requestedQueryCost: 10,
  actualQueryCost: 10,
  throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 1990, restoreRate: 100 },
};

function answer(
  operation: string,
  variables: Record<string, unknown>,
  sequence: number,
  options: ShopAdminStubOptions,
): unknown {
  switch (operation) {
    case 'RelaisReconcileOrders':
      return options.listedOrders
        ? orderListingPage(variables, options.listedOrders(), new Date().toISOString())
        : undefined;
    case 'RelaisOrderState':
      return {
        order: {
          id: String(variables.id),
          name: '#1001',
          tags: [],
          note: null,
          cancelledAt: null,
          displayFinancialStatus: 'PENDING',
          metafields: { nodes: [] },
          fulfillmentOrders: {
            nodes: [
              {
                id: 'gid://shopify/FulfillmentOrder/1',
                status: 'OPEN',
                lineItems: { nodes: [{ id: 'gid://shopify/FulfillmentOrderLineItem/1', remainingQuantity: 1 }] },
              },
            ],
          },
          fulfillments: [],
        },
      };
    case 'RelaisMetafieldsSet':
      return { metafieldsSet: { metafields: [], userErrors: [] } };
    case 'RelaisTagsAdd':
      return { tagsAdd: { node: { id: String(variables.id) }, userErrors: [] } };
    case 'RelaisFulfillmentCreate':
      return {
        fulfillmentCreate: {
          fulfillment: { id: `gid://shopify/Fulfillment/${sequence}`, status: 'SUCCESS', trackingInfo: [] },
          userErrors: [],
        },
      };
    case 'RelaisOrderMarkAsPaid':
      return {
        orderMarkAsPaid: {
          order: { id: String((variables.input as { id?: unknown } | undefined)?.id), displayFinancialStatus: 'PAID' },
          userErrors: [],
        },
      };
    default:
      return undefined;
  }
}

export interface ShopAdminStubOptions {
  /** The shop's order ids its `orders` listing shows (relais reconcile); without it, the listing is refused. */
  listedOrders?: () => readonly number[];
}

export async function startShopAdminStub(options: ShopAdminStubOptions = {}): Promise<ShopAdminStub> {
  const counts: Record<string, number> = {};
  let sequence = 0;
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.post(/\/graphql\.json$/, (req, res) => {
    const parsed = graphqlRequest.safeParse(req.body);
    const operation = parsed.success
      ? (/(?:query|mutation)\s+(\w+)/.exec(parsed.data.query)?.[1] ?? 'anonymous')
      : 'invalid';
    counts[operation] = (counts[operation] ?? 0) + 1;
    const data = parsed.success ? answer(operation, parsed.data.variables ?? {}, ++sequence, options) : undefined;
    // An operation the stub does not know is a loud failure in the bench, not a silent success.
    if (data === undefined)
      return void res.status(400).json({ errors: [{ message: `the bench's shop stub does not answer ${operation}` }] });
    res.json({ data, extensions: { cost: COST } });
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => ({ ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
