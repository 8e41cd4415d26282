/**
 * What the Admin client (admin.ts) says to Shopify and what it reads back: the GraphQL documents, and the
 * shapes of the answers the typed operations parse.
 */
import { z } from 'zod';

// ---- the documents Relais sends ----------------------------------------------------------------------

/**
 * Every GraphQL document Relais sends to Shopify, in one place so tests can validate each one against the
 * real Admin schema. Sizes are chosen to stay far below the single-query cost limit (1000).
 */
export const ADMIN_DOCUMENTS = {
  orderState: `query RelaisOrderState($id: ID!) {
  order(id: $id) {
    id
    name
    tags
    note
    cancelledAt
    displayFinancialStatus
    metafields(first: 20, namespace: "relais") { nodes { namespace key type value } }
    fulfillmentOrders(first: 5) {
      nodes { id status lineItems(first: 50) { nodes { id remainingQuantity } } }
    }
    fulfillments(first: 10) {
      id
      status
      trackingInfo(first: 5) { company number url }
      events(first: 25) { nodes { status happenedAt } }
    }
  }
}`,
  metafieldsSet: `mutation RelaisMetafieldsSet($metafields: [MetafieldsSetInput!]!) {
  metafieldsSet(metafields: $metafields) {
    metafields { namespace key }
    userErrors { field message code }
  }
}`,
  tagsAdd: `mutation RelaisTagsAdd($id: ID!, $tags: [String!]!) {
  tagsAdd(id: $id, tags: $tags) {
    node { id }
    userErrors { field message }
  }
}`,
  fulfillmentCreate: `mutation RelaisFulfillmentCreate($fulfillment: FulfillmentInput!) {
  fulfillmentCreate(fulfillment: $fulfillment) {
    fulfillment { id status trackingInfo(first: 5) { company number url } }
    userErrors { field message }
  }
}`,
  fulfillmentEventCreate: `mutation RelaisFulfillmentEventCreate($fulfillmentEvent: FulfillmentEventInput!) {
  fulfillmentEventCreate(fulfillmentEvent: $fulfillmentEvent) {
    fulfillmentEvent { id status happenedAt }
    userErrors { field message }
  }
}`,
  orderMarkAsPaid: `mutation RelaisOrderMarkAsPaid($input: OrderMarkAsPaidInput!) {
  orderMarkAsPaid(input: $input) {
    order { id displayFinancialStatus }
    userErrors { field message }
  }
}`,
  orderUpdateNote: `mutation RelaisOrderUpdateNote($input: OrderInput!) {
  orderUpdate(input: $input) {
    order { id note }
    userErrors { field message }
  }
}`,
} as const;

/** The fulfillment event statuses of Admin API 2026-10 (enum FulfillmentEventStatus). */
export type FulfillmentEventStatus =
  | 'ATTEMPTED_DELIVERY'
  | 'CARRIER_PICKED_UP'
  | 'CONFIRMED'
  | 'DELAYED'
  | 'DELIVERED'
  | 'FAILURE'
  | 'IN_TRANSIT'
  | 'LABEL_PRINTED'
  | 'LABEL_PURCHASED'
  | 'OUT_FOR_DELIVERY'
  | 'READY_FOR_PICKUP';

// ---- what we read back -------------------------------------------------------------------------------

export const orderStateSchema = z.object({
  id: z.string(),
  name: z.string(),
  tags: z.array(z.string()),
  note: z.string().nullable(),
  cancelledAt: z.string().nullable(),
  displayFinancialStatus: z.string().nullable(),
  metafields: z.object({
    nodes: z.array(z.object({ namespace: z.string(), key: z.string(), type: z.string(), value: z.string() })),
  }),
  fulfillmentOrders: z.object({
    nodes: z.array(
      z.object({
        id: z.string(),
        status: z.string(),
        lineItems: z.object({ nodes: z.array(z.object({ id: z.string(), remainingQuantity: z.number().int() })) }),
      }),
    ),
  }),
  fulfillments: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      trackingInfo: z.array(
        z.object({ company: z.string().nullable(), number: z.string().nullable(), url: z.string().nullable() }),
      ),
      events: z.object({ nodes: z.array(z.object({ status: z.string(), happenedAt: z.string() })) }),
    }),
  ),
});

/** The order as the writer needs to see it before writing. */
export type ShopifyOrderState = z.infer<typeof orderStateSchema>;

/** What fulfillmentCreate answers when it created one. */
export const fulfillmentCreated = z.object({
  fulfillmentCreate: z.object({ fulfillment: z.object({ id: z.string() }) }),
});
