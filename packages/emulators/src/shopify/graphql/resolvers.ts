/**
 * The root value handed to graphql-js `execute`: one function per QueryRoot and Mutation field the emulator
 * serves. Arguments arrive already validated and coerced against Shopify's real schema, so their shapes
 * are the schema's input types. Global ids are checked here: a malformed id is a top-level error (as at
 * Shopify), an id of another type or of nothing is "not found" (null for queries, userErrors for mutations).
 */
import { randomUUID } from 'node:crypto';
import { gid, idOfType, parseGid } from '../format.js';
import type { FulfillmentEventStatus, ShopEvent, StoredOrder } from '../model.js';
import type { FulfillmentEventInput, MetafieldSetInput, ShopStore, TrackingInput } from '../store.js';
import { graphqlTopic } from '../topics.js';
import { connection, type ConnectionArgs } from './connection.js';
import { parseOrderSearch, type SearchWarning } from './order-search.js';
import { userErrorViews, Views, type View } from './views.js';

export interface RequestContext {
  store: ShopStore;
  apiVersion: string;
  /** Changes made by mutations, announced to webhook subscribers once the request has been answered. */
  emit(events: ShopEvent[]): void;
  searchWarnings: { path: string[]; query: string; warnings: SearchWarning[] }[];
}

/** Root fields the emulator serves, by operation type: reported by the tests and the final docs. */
export const IMPLEMENTED_ROOT_FIELDS = {
  query: [
    'shop',
    'currentAppInstallation',
    'order',
    'orders',
    'fulfillment',
    'fulfillmentOrder',
    'node',
    'nodes',
    'webhookSubscription',
    'webhookSubscriptions',
    'carrierService',
    'carrierServices',
  ],
  mutation: [
    'fulfillmentCreate',
    'fulfillmentTrackingInfoUpdate',
    'fulfillmentEventCreate',
    'orderMarkAsPaid',
    'orderCancel',
    'orderUpdate',
    'tagsAdd',
    'tagsRemove',
    'metafieldsSet',
    'webhookSubscriptionCreate',
    'webhookSubscriptionDelete',
    'carrierServiceCreate',
    'carrierServiceUpdate',
    'carrierServiceDelete',
  ],
} as const;

const ORDER_SORT: Record<string, (order: StoredOrder) => number | string> = {
  ID: (order) => order.id,
  CREATED_AT: (order) => order.createdAt,
  UPDATED_AT: (order) => order.updatedAt,
  PROCESSED_AT: (order) => order.processedAt,
  ORDER_NUMBER: (order) => order.number,
  FINANCIAL_STATUS: (order) => order.financialStatus,
  RELEVANCE: (order) => order.id,
};

interface FulfillmentInputArgs {
  lineItemsByFulfillmentOrder: {
    fulfillmentOrderId: string;
    fulfillmentOrderLineItems?: { id: string; quantity: number }[] | null;
  }[];
  trackingInfo?: TrackingInput | null;
  notifyCustomer?: boolean | null;
}

interface FulfillmentEventArgs extends Omit<FulfillmentEventInput, 'fulfillmentId' | 'status'> {
  fulfillmentId: string;
  status: FulfillmentEventStatus;
}

interface MetafieldsSetArgs extends Omit<MetafieldSetInput, 'ownerId'> {
  ownerId: string;
}

interface WebhookSubscriptionInputArgs {
  uri?: string | null;
  callbackUrl?: string | null;
  format?: 'JSON' | 'XML' | null;
  includeFields?: string[] | null;
  metafieldNamespaces?: string[] | null;
  filter?: string | null;
  name?: string | null;
}

export function createRootValue(ctx: RequestContext): View {
  const { store } = ctx;
  const views = new Views(store);

  const orderById = (id: unknown) => store.order(idOfType(id, 'Order'));

  const nodeById = (id: unknown): View | null => {
    const { type, id: numeric } = parseGid(id);
    switch (type) {
      case 'Order': {
        const order = store.order(numeric);
        return order ? views.order(order) : null;
      }
      case 'Fulfillment': {
        const found = store.findFulfillment(numeric);
        return found ? views.fulfillment(found.order, found.fulfillment) : null;
      }
      case 'FulfillmentOrder': {
        const found = store.findFulfillmentOrder(numeric);
        return found ? views.fulfillmentOrder(found.order, found.fulfillmentOrder) : null;
      }
      case 'WebhookSubscription': {
        const subscription = store.webhookSubscriptions.get(numeric);
        return subscription ? views.webhookSubscription(subscription, ctx.apiVersion) : null;
      }
      case 'DeliveryCarrierService': {
        const service = store.carrierServices.get(numeric);
        return service ? views.carrierService(service) : null;
      }
      case 'Shop':
        return numeric === store.shop.shopId ? views.shop() : null;
      default:
        return null;
    }
  };

  const root: View = {
    // ---- queries ----------------------------------------------------------------------------------
    shop: () => views.shop(),
    currentAppInstallation: () => ({
      __typename: 'AppInstallation',
      id: gid('AppInstallation', store.shop.shopId),
      accessScopes: store.shop.scopes.map((handle) => ({ __typename: 'AccessScope', handle, description: handle })),
    }),
    order: (args: { id: string }) => {
      const order = orderById(args.id);
      return order ? views.order(order) : null;
    },
    orders: (args: ConnectionArgs & { query?: string | null; sortKey?: string | null }) => {
      const search = parseOrderSearch(args.query);
      if (search.warnings.length > 0)
        ctx.searchWarnings.push({ path: ['orders'], query: args.query ?? '', warnings: search.warnings });
      const sortValue = ORDER_SORT[args.sortKey ?? 'ID'] ?? ORDER_SORT['ID'] ?? ((order: StoredOrder) => order.id);
      const matching = [...store.orders.values()].filter((order) => search.matches(order));
      return connection(
        matching,
        args,
        (order) => ({ id: order.id, value: sortValue(order) }),
        (order) => views.order(order),
      );
    },
    fulfillment: (args: { id: string }) => {
      const found = store.findFulfillment(idOfType(args.id, 'Fulfillment'));
      return found ? views.fulfillment(found.order, found.fulfillment) : null;
    },
    fulfillmentOrder: (args: { id: string }) => {
      const found = store.findFulfillmentOrder(idOfType(args.id, 'FulfillmentOrder'));
      return found ? views.fulfillmentOrder(found.order, found.fulfillmentOrder) : null;
    },
    node: (args: { id: string }) => nodeById(args.id),
    nodes: (args: { ids: string[] }) => args.ids.map((id) => nodeById(id)),
    webhookSubscription: (args: { id: string }) => {
      const id = idOfType(args.id, 'WebhookSubscription');
      const subscription = id === undefined ? undefined : store.webhookSubscriptions.get(id);
      return subscription ? views.webhookSubscription(subscription, ctx.apiVersion) : null;
    },
    webhookSubscriptions: (
      args: ConnectionArgs & { topics?: string[] | null; uri?: string | null; callbackUrl?: string | null },
    ) => {
      const uri = args.uri ?? args.callbackUrl ?? null;
      const selected = [...store.webhookSubscriptions.values()].filter(
        (s) => (!args.topics || args.topics.includes(s.topic)) && (uri === null || s.uri === uri),
      );
      return connection(
        selected,
        args,
        (s) => ({ id: s.id, value: s.id }),
        (s) => views.webhookSubscription(s, ctx.apiVersion),
      );
    },
    carrierService: (args: { id: string }) => {
      const id = idOfType(args.id, 'DeliveryCarrierService');
      const service = id === undefined ? undefined : store.carrierServices.get(id);
      return service ? views.carrierService(service) : null;
    },
    carrierServices: (args: ConnectionArgs & { query?: string | null }) => {
      const wantActive = /active:(true|false)/.exec(args.query ?? '')?.[1];
      const selected = [...store.carrierServices.values()].filter(
        (s) => wantActive === undefined || String(s.active) === wantActive,
      );
      return connection(
        selected,
        args,
        (s) => ({ id: s.id, value: s.id }),
        (s) => views.carrierService(s),
      );
    },

    // ---- mutations --------------------------------------------------------------------------------
    fulfillmentCreate: (args: { fulfillment: FulfillmentInputArgs; message?: string | null }) => {
      const input = args.fulfillment;
      const result = store.fulfill({
        lineItemsByFulfillmentOrder: input.lineItemsByFulfillmentOrder.map((group) => ({
          fulfillmentOrderId: idOfType(group.fulfillmentOrderId, 'FulfillmentOrder'),
          fulfillmentOrderLineItems: group.fulfillmentOrderLineItems?.map((line) => ({
            id: idOfType(line.id, 'FulfillmentOrderLineItem'),
            quantity: line.quantity,
          })),
        })),
        trackingInfo: input.trackingInfo ?? null,
        notifyCustomer: input.notifyCustomer ?? false,
        message: args.message ?? null,
      });
      if (!result.ok) return { fulfillment: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      const order = store.order(result.value.orderId);
      return { fulfillment: order ? views.fulfillment(order, result.value) : null, userErrors: [] };
    },
    fulfillmentTrackingInfoUpdate: (args: {
      fulfillmentId: string;
      trackingInfoInput: TrackingInput;
      notifyCustomer?: boolean | null;
    }) => {
      const result = store.updateTracking(
        idOfType(args.fulfillmentId, 'Fulfillment'),
        args.trackingInfoInput,
        args.notifyCustomer ?? false,
      );
      if (!result.ok) return { fulfillment: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      const order = store.order(result.value.orderId);
      return { fulfillment: order ? views.fulfillment(order, result.value) : null, userErrors: [] };
    },
    fulfillmentEventCreate: (args: { fulfillmentEvent: FulfillmentEventArgs }) => {
      const input = args.fulfillmentEvent;
      const result = store.addFulfillmentEvent({
        ...input,
        fulfillmentId: idOfType(input.fulfillmentId, 'Fulfillment'),
      });
      if (!result.ok) return { fulfillmentEvent: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      return { fulfillmentEvent: views.fulfillmentEvent(result.value), userErrors: [] };
    },
    orderMarkAsPaid: (args: { input: { id: string } }) => {
      const result = store.markAsPaid(idOfType(args.input.id, 'Order'));
      if (!result.ok) return { order: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      return { order: views.order(result.value), userErrors: [] };
    },
    orderCancel: (args: {
      orderId: string;
      reason: string;
      refund?: boolean | null;
      restock: boolean;
      staffNote?: string | null;
      notifyCustomer?: boolean | null;
    }) => {
      const result = store.cancel(idOfType(args.orderId, 'Order'), {
        reason: args.reason,
        refund: args.refund,
        restock: args.restock,
        staffNote: args.staffNote,
      });
      if (!result.ok) {
        const errors = userErrorViews(result.userErrors);
        return { job: null, jobResult: null, orderCancelUserErrors: errors, userErrors: errors };
      }
      ctx.emit(result.events);
      // Shopify cancels asynchronously and answers with a job; the emulator has already finished it.
      const jobId = `gid://shopify/Job/${randomUUID()}`;
      return {
        job: { __typename: 'Job', id: jobId, done: true, query: root },
        jobResult: {
          __typename: 'OrderCancelJobResult',
          id: jobId,
          done: true,
          status: 'SUCCEEDED',
          errors: [],
          order: views.order(result.value),
        },
        orderCancelUserErrors: [],
        userErrors: [],
      };
    },
    orderUpdate: (args: {
      input: { id: string; note?: string | null; tags?: string[] | null; email?: string | null; phone?: string | null };
    }) => {
      const { id, ...changes } = args.input;
      const result = store.updateOrder(idOfType(id, 'Order'), changes);
      if (!result.ok) return { order: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      return { order: views.order(result.value), userErrors: [] };
    },
    tagsAdd: (args: { id: string; tags: string[] }) => {
      const result = store.addTags(idOfType(args.id, 'Order'), args.tags);
      if (!result.ok) return { node: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      return { node: views.order(result.value), userErrors: [] };
    },
    tagsRemove: (args: { id: string; tags: string[] }) => {
      const result = store.removeTags(idOfType(args.id, 'Order'), args.tags);
      if (!result.ok) return { node: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      return { node: views.order(result.value), userErrors: [] };
    },
    metafieldsSet: (args: { metafields: MetafieldsSetArgs[] }) => {
      const result = store.setMetafields(args.metafields.map((m) => ({ ...m, ownerId: idOfType(m.ownerId, 'Order') })));
      if (!result.ok) return { metafields: null, userErrors: userErrorViews(result.userErrors) };
      ctx.emit(result.events);
      return {
        metafields: result.value.flatMap((metafield) => {
          const owner = store.metafieldOwner(metafield);
          return owner ? [views.metafield(owner, metafield)] : [];
        }),
        userErrors: [],
      };
    },
    webhookSubscriptionCreate: (args: { topic: string; webhookSubscription: WebhookSubscriptionInputArgs }) => {
      const result = store.createWebhookSubscription({ topic: graphqlTopic(args.topic), ...args.webhookSubscription });
      if (!result.ok) return { webhookSubscription: null, userErrors: userErrorViews(result.userErrors) };
      return { webhookSubscription: views.webhookSubscription(result.value, ctx.apiVersion), userErrors: [] };
    },
    webhookSubscriptionDelete: (args: { id: string }) => {
      const result = store.deleteWebhookSubscription(idOfType(args.id, 'WebhookSubscription'));
      if (!result.ok) return { deletedWebhookSubscriptionId: null, userErrors: userErrorViews(result.userErrors) };
      return { deletedWebhookSubscriptionId: gid('WebhookSubscription', result.value), userErrors: [] };
    },
    carrierServiceCreate: (args: {
      input: { name: string; callbackUrl: string; active: boolean; supportsServiceDiscovery: boolean };
    }) => {
      const result = store.createCarrierService(args.input);
      if (!result.ok) return { carrierService: null, userErrors: userErrorViews(result.userErrors) };
      return { carrierService: views.carrierService(result.value), userErrors: [] };
    },
    carrierServiceUpdate: (args: {
      input: {
        id: string;
        name?: string | null;
        callbackUrl?: string | null;
        active?: boolean | null;
        supportsServiceDiscovery?: boolean | null;
      };
    }) => {
      const { id, ...changes } = args.input;
      const result = store.updateCarrierService(idOfType(id, 'DeliveryCarrierService'), changes);
      if (!result.ok) return { carrierService: null, userErrors: userErrorViews(result.userErrors) };
      return { carrierService: views.carrierService(result.value), userErrors: [] };
    },
    carrierServiceDelete: (args: { id: string }) => {
      const result = store.deleteCarrierService(idOfType(args.id, 'DeliveryCarrierService'));
      if (!result.ok) return { deletedId: null, userErrors: userErrorViews(result.userErrors) };
      return { deletedId: gid('DeliveryCarrierService', result.value), userErrors: [] };
    },
  };
  return root;
}
