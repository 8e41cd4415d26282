/**
 * One emulated shop: its orders, fulfillments, metafields, webhook subscriptions and carrier services, and
 * the business rules Shopify applies when they change. Operations return either the change and the events
 * it caused (for webhooks) or the userErrors Shopify would answer; nothing here knows about HTTP or GraphQL.
 *
 * Error messages follow Shopify's where they are known and are close paraphrases otherwise: callers should
 * rely on the presence of userErrors and their `field`, never on the exact wording.
 */
import { createHash, randomBytes } from 'node:crypto';
import { restTime, toHundredths } from './format.js';
import {
  canMarkAsPaid,
  currentShipping,
  currentShippingTax,
  currentTotal,
  displayFulfillmentStatus,
  originalTotal,
  type FinancialStatus,
  type FulfillmentEventStatus,
  type ShopEvent,
  type StoredCarrierService,
  type StoredFulfillment,
  type StoredFulfillmentEvent,
  type StoredFulfillmentOrder,
  type StoredMetafield,
  type StoredOrder,
  type StoredWebhookSubscription,
  type TrackingInfo,
  type UserError,
} from './model.js';
import {
  createOrderInputSchema,
  DEFAULT_COD_GATEWAY,
  lineItemInputSchema,
  DEFAULT_SHIPPING_ADDRESS,
  type CreateOrderInput,
} from './orders-input.js';
import {
  renderRestFulfillment,
  renderRestFulfillmentEvent,
  renderRestOrder,
  type RestOrder,
  type ShopIdentity,
} from './rest.js';
import { forAppWithoutAccess } from './customer-data.js';
import { restTopic } from './topics.js';

export type Result<T> = { ok: true; value: T; events: ShopEvent[] } | { ok: false; userErrors: UserError[] };

export interface ResolvedShop extends ShopIdentity {
  name: string;
  email: string;
  accessToken: string;
  clientSecret: string;
  /** The Admin API scopes the app is granted (currentAppInstallation.accessScopes). */
  scopes: string[];
  /** False: the app lacks protected customer data access, and is sent orders without names, addresses, phones. */
  protectedCustomerData: boolean;
}

/** Plausible, distinct id ranges per resource, all safe integers. */
const ID_BASES = {
  Order: 6_100_000_000_000,
  Customer: 7_900_000_000_000,
  LineItem: 16_100_000_000_000,
  ShippingLine: 5_100_000_000_000,
  FulfillmentOrder: 7_100_000_000_000,
  FulfillmentOrderLineItem: 15_100_000_000_000,
  Fulfillment: 5_600_000_000_000,
  FulfillmentEvent: 4_100_000_000_000,
  Metafield: 31_000_000_000_000,
  WebhookSubscription: 1_400_000_000_000,
  DeliveryCarrierService: 70_000_000_000,
  Refund: 890_000_000_000,
  RefundShippingLine: 910_000_000_000,
} as const;

export class IdSequence {
  private counter = 0;
  next(type: keyof typeof ID_BASES): number {
    this.counter += 1;
    return ID_BASES[type] + this.counter;
  }
}

const ORDER_CANCEL_REASONS = new Set(['CUSTOMER', 'DECLINED', 'FRAUD', 'INVENTORY', 'OTHER', 'STAFF']);

export interface FulfillInput {
  lineItemsByFulfillmentOrder: {
    fulfillmentOrderId: number | undefined;
    fulfillmentOrderLineItems?: { id: number | undefined; quantity: number }[] | null;
  }[];
  trackingInfo?: TrackingInput | null;
  notifyCustomer?: boolean | null;
  message?: string | null;
}

export interface TrackingInput {
  company?: string | null;
  number?: string | null;
  numbers?: string[] | null;
  url?: string | null;
  urls?: string[] | null;
}

export interface FulfillmentEventInput {
  fulfillmentId: number | undefined;
  status: FulfillmentEventStatus;
  happenedAt?: string | null;
  message?: string | null;
  estimatedDeliveryAt?: string | null;
  address1?: string | null;
  city?: string | null;
  province?: string | null;
  country?: string | null;
  zip?: string | null;
  latitude?: number | null;
  longitude?: number | null;
}

export interface MetafieldSetInput {
  ownerId: number | undefined;
  namespace?: string | null;
  key: string;
  type?: string | null;
  value: string;
  compareDigest?: string | null;
}

/** Namespace given to metafields set without one: Shopify reserves one per app. */
export const APP_RESERVED_NAMESPACE = 'app--emulated';

export class ShopStore {
  readonly orders = new Map<number, StoredOrder>();
  readonly webhookSubscriptions = new Map<number, StoredWebhookSubscription>();
  readonly carrierServices = new Map<number, StoredCarrierService>();
  private nextOrderNumber = 1;
  private lastStamp = 0;

  constructor(
    readonly shop: ResolvedShop,
    private readonly ids: IdSequence,
    private readonly clock: () => number,
  ) {}

  /** A timestamp that never goes backwards, so updated_at filters see every change. */
  private now(): number {
    const stamp = Math.max(this.clock(), this.lastStamp);
    this.lastStamp = stamp;
    return stamp;
  }

  // ---- orders ---------------------------------------------------------------------------------------

  createOrder(rawInput: CreateOrderInput = {}): { order: StoredOrder; events: ShopEvent[] } {
    const input = createOrderInputSchema.parse(rawInput);
    const now = this.now();
    const createdAt = input.createdAt === undefined ? now : new Date(input.createdAt).getTime();
    if (Number.isNaN(createdAt)) throw new Error(`createOrder: invalid createdAt ${String(input.createdAt)}`);
    const updatedAt = input.updatedAt === undefined ? Math.max(createdAt, now) : new Date(input.updatedAt).getTime();
    const id = input.id ?? this.ids.next('Order');
    if (this.orders.has(id)) throw new Error(`createOrder: order ${id} already exists in ${this.shop.domain}`);
    const number = this.nextOrderNumber++;
    const items = input.lineItems ?? [lineItemInputSchema.parse({ title: 'Boubou brodé', price: '15000', grams: 800 })];
    const lineItems = items.map((item) => {
      return {
        id: this.ids.next('LineItem'),
        title: item.title,
        variantTitle: item.variantTitle,
        sku: item.sku,
        vendor: item.vendor,
        quantity: item.quantity,
        price: toHundredths(item.price),
        grams: item.grams,
        productId: item.productId,
        variantId: item.variantId,
        requiresShipping: item.requiresShipping,
        fulfilledQuantity: 0,
        removedQuantity: 0,
      };
    });
    const taxesIncluded = input.taxesIncluded ?? false;
    const shippingLines = (input.shippingLines ?? [{ title: 'Livraison Dakar', price: '2000' }]).map((line) => {
      const price = toHundredths(line.price);
      const discount = line.discount ? Math.min(price, toHundredths(line.discount.amount)) : 0;
      const rate = line.taxRate ?? 0;
      return {
        id: this.ids.next('ShippingLine'),
        title: line.title,
        code: line.code ?? line.title,
        price,
        discount,
        discountCode: line.discount?.code ?? null,
        tax: taxOn(price - discount, rate, taxesIncluded),
        taxTitle: 'TVA',
        taxRate: rate,
      };
    });
    const financialStatus: FinancialStatus = input.financialStatus ?? 'pending';
    const shippingAddress =
      input.shippingAddress === undefined ? { ...DEFAULT_SHIPPING_ADDRESS } : input.shippingAddress;
    const order: StoredOrder = {
      id,
      number,
      name: `#${number + 1000}`,
      token: randomBytes(16).toString('hex'),
      confirmationNumber: randomBytes(5).toString('hex').toUpperCase().slice(0, 9),
      createdAt,
      updatedAt,
      processedAt: createdAt,
      currency: input.currency ?? this.shop.currency,
      presentmentCurrency: input.presentmentCurrency ?? input.currency ?? this.shop.currency,
      email: input.email === undefined ? 'awa.diop@example.com' : input.email,
      phone: input.phone === undefined ? '+221771234567' : input.phone,
      note: input.note ?? null,
      noteAttributes: input.noteAttributes ?? [],
      tags: normaliseTags(input.tags ?? []),
      gatewayNames: input.gateway === undefined ? [DEFAULT_COD_GATEWAY] : [input.gateway].flat(),
      financialStatus,
      paid: 0,
      cancelledAt: null,
      cancelReason: null,
      closedAt: null,
      lineItems,
      shippingLines,
      taxesIncluded,
      refunds: [],
      shippingAddress,
      billingAddress: input.billingAddress === undefined ? shippingAddress : input.billingAddress,
      customer:
        input.customer === undefined
          ? {
              id: this.ids.next('Customer'),
              email: 'awa.diop@example.com',
              first_name: 'Awa',
              last_name: 'Diop',
              phone: '+221771234567',
            }
          : input.customer,
      fulfillmentOrders: [],
      fulfillments: [],
      metafields: [],
      sourceName: input.sourceName ?? 'web',
      test: input.test ?? false,
      restExtras: input.rest ?? {},
    };
    const total = originalTotal(order);
    if (financialStatus === 'paid') order.paid = total;
    if (financialStatus === 'partially_paid')
      order.paid = input.amountPaid === undefined ? Math.trunc(total / 2) : toHundredths(input.amountPaid);
    order.fulfillmentOrders.push(this.newFulfillmentOrder(order, createdAt));
    this.orders.set(order.id, order);
    const events = [this.orderEvent('ORDERS_CREATE', order)];
    if (financialStatus === 'paid') events.push(this.orderEvent('ORDERS_PAID', order));
    return { order, events };
  }

  /** Shopify derives one fulfillment order per location from the line items; the emulated shop has one location. */
  private newFulfillmentOrder(order: StoredOrder, at: number): StoredFulfillmentOrder {
    return {
      id: this.ids.next('FulfillmentOrder'),
      status: 'OPEN',
      createdAt: at,
      updatedAt: at,
      lineItems: order.lineItems
        .filter((item) => item.requiresShipping)
        .map((item) => ({
          id: this.ids.next('FulfillmentOrderLineItem'),
          lineItemId: item.id,
          totalQuantity: item.quantity,
          remainingQuantity: item.quantity,
        })),
    };
  }

  order(id: number | undefined): StoredOrder | undefined {
    return id === undefined ? undefined : this.orders.get(id);
  }

  rest(order: StoredOrder): RestOrder {
    return renderRestOrder(this.shop, order);
  }

  /** The order as the app is allowed to see it (webhooks, Admin API reads): customer data redacted without access. */
  forApp(order: StoredOrder): StoredOrder {
    return this.shop.protectedCustomerData ? order : forAppWithoutAccess(order);
  }

  /** The REST order body the app is sent (webhooks, REST reads). */
  restForApp(order: StoredOrder): RestOrder {
    return renderRestOrder(this.shop, this.forApp(order));
  }

  private orderEvent(topic: string, order: StoredOrder): ShopEvent {
    return { topic: restTopic(topic), payload: this.restForApp(order), triggeredAt: order.updatedAt };
  }

  findFulfillment(id: number | undefined): { order: StoredOrder; fulfillment: StoredFulfillment } | undefined {
    if (id === undefined) return undefined;
    for (const order of this.orders.values()) {
      const fulfillment = order.fulfillments.find((candidate) => candidate.id === id);
      if (fulfillment) return { order, fulfillment };
    }
    return undefined;
  }

  findFulfillmentOrder(
    id: number | undefined,
  ): { order: StoredOrder; fulfillmentOrder: StoredFulfillmentOrder } | undefined {
    if (id === undefined) return undefined;
    for (const order of this.orders.values()) {
      const fulfillmentOrder = order.fulfillmentOrders.find((candidate) => candidate.id === id);
      if (fulfillmentOrder) return { order, fulfillmentOrder };
    }
    return undefined;
  }

  markAsPaid(orderId: number | undefined): Result<StoredOrder> {
    const order = this.order(orderId);
    if (!order) return fail(['input', 'id'], 'Order does not exist');
    if (order.cancelledAt !== null)
      return fail(['input', 'id'], 'Order cannot be marked as paid because it has been canceled.');
    if (!canMarkAsPaid(order)) return fail(['input', 'id'], 'Order cannot be marked as paid.');
    order.paid = currentTotal(order);
    order.financialStatus = 'paid';
    order.updatedAt = this.now();
    return {
      ok: true,
      value: order,
      events: [this.orderEvent('ORDERS_PAID', order), this.orderEvent('ORDERS_UPDATED', order)],
    };
  }

  /**
   * Refunds shipping, as the admin's refund with "Refund shipping" does (refundCreate with `shipping`): the
   * amount (before tax when prices exclude it) comes off the current shipping and its share of the tax with it.
   * Money paid is returned up to what was paid; an unpaid order has nothing returned, only less to pay.
   */
  refundShipping(orderId: number | undefined, amount: number, note: string | null = null): Result<StoredOrder> {
    const order = this.order(orderId);
    if (!order) return fail(['orderId'], 'Order does not exist', 'NOT_FOUND');
    const line = order.shippingLines[0];
    const refundable = currentShipping(order);
    if (!line || amount <= 0 || amount > refundable)
      return fail(
        ['refund', 'shipping', 'amount'],
        `Shipping refund must be between 0 and ${refundable / 100}`,
        'INVALID',
      );
    const tax =
      refundable === amount ? currentShippingTax(order) : Math.round((currentShippingTax(order) * amount) / refundable);
    order.refunds.push({
      id: this.ids.next('Refund'),
      createdAt: this.now(),
      note,
      shippingLines: [{ id: this.ids.next('RefundShippingLine'), shippingLineId: line.id, subtotal: amount, tax }],
    });
    const returned = Math.min(order.paid, amount + (order.taxesIncluded ? 0 : tax));
    order.paid -= returned;
    if (returned > 0) order.financialStatus = order.paid > 0 ? 'partially_refunded' : 'refunded';
    order.updatedAt = this.now();
    return { ok: true, value: order, events: [this.orderEvent('ORDERS_UPDATED', order)] };
  }

  cancel(
    orderId: number | undefined,
    options: { reason: string; refund?: boolean | null; restock?: boolean; staffNote?: string | null },
  ): Result<StoredOrder> {
    const order = this.order(orderId);
    if (!order) return fail(['orderId'], 'Order does not exist', 'NOT_FOUND');
    if (!ORDER_CANCEL_REASONS.has(options.reason)) return fail(['reason'], 'Reason is invalid', 'INVALID');
    if (order.cancelledAt !== null) return fail(['orderId'], 'Order has already been cancelled', 'INVALID');
    const hasFulfillments = order.fulfillments.some((f) => f.status === 'SUCCESS');
    if (hasFulfillments && order.paid > 0) {
      return fail(['orderId'], 'Cannot cancel an order that is paid and has fulfillments', 'INVALID');
    }
    const now = this.now();
    order.cancelledAt = now;
    order.cancelReason = options.reason.toLowerCase();
    order.updatedAt = now;
    for (const item of order.lineItems) item.removedQuantity = item.quantity - item.fulfilledQuantity;
    // Observed at Shopify: a cancelled order's fulfillment orders end CLOSED, not CANCELLED.
    for (const fulfillmentOrder of order.fulfillmentOrders) {
      if (fulfillmentOrder.status !== 'CLOSED') {
        fulfillmentOrder.status = 'CLOSED';
        fulfillmentOrder.updatedAt = now;
      }
    }
    if (order.paid === 0) order.financialStatus = 'voided';
    else if (options.refund) order.financialStatus = 'refunded';
    if (options.staffNote) order.note = order.note ? `${order.note}\n${options.staffNote}` : options.staffNote;
    return {
      ok: true,
      value: order,
      events: [this.orderEvent('ORDERS_CANCELLED', order), this.orderEvent('ORDERS_UPDATED', order)],
    };
  }

  updateOrder(
    orderId: number | undefined,
    changes: { note?: string | null; tags?: string[] | null; email?: string | null; phone?: string | null },
  ): Result<StoredOrder> {
    const order = this.order(orderId);
    if (!order) return fail(['id'], 'Order does not exist');
    if (changes.note !== undefined) order.note = changes.note;
    if (changes.tags !== undefined && changes.tags !== null) order.tags = normaliseTags(changes.tags);
    if (changes.email !== undefined) order.email = changes.email;
    if (changes.phone !== undefined) order.phone = changes.phone;
    order.updatedAt = this.now();
    return { ok: true, value: order, events: [this.orderEvent('ORDERS_UPDATED', order)] };
  }

  addTags(orderId: number | undefined, tags: string[]): Result<StoredOrder> {
    const order = this.order(orderId);
    if (!order) return fail(['id'], 'Order does not exist');
    const added = normaliseTags(tags);
    if (added.length === 0) return fail(['tags'], 'Tags cannot be blank');
    order.tags = normaliseTags([...order.tags, ...added]);
    order.updatedAt = this.now();
    return { ok: true, value: order, events: [this.orderEvent('ORDERS_UPDATED', order)] };
  }

  removeTags(orderId: number | undefined, tags: string[]): Result<StoredOrder> {
    const order = this.order(orderId);
    if (!order) return fail(['id'], 'Order does not exist');
    const removed = new Set(normaliseTags(tags).map((tag) => tag.toLowerCase()));
    order.tags = order.tags.filter((tag) => !removed.has(tag.toLowerCase()));
    order.updatedAt = this.now();
    return { ok: true, value: order, events: [this.orderEvent('ORDERS_UPDATED', order)] };
  }

  // ---- fulfillments ---------------------------------------------------------------------------------

  fulfill(input: FulfillInput): Result<StoredFulfillment> {
    const groups = input.lineItemsByFulfillmentOrder;
    if (groups.length === 0)
      return fail(['fulfillment', 'lineItemsByFulfillmentOrder'], "Line items by fulfillment order can't be blank");
    let order: StoredOrder | undefined;
    const planned: {
      fulfillmentOrder: StoredFulfillmentOrder;
      lineItemId: number;
      foLineItemId: number;
      quantity: number;
    }[] = [];
    for (const [index, group] of groups.entries()) {
      const path = ['fulfillment', 'lineItemsByFulfillmentOrder', String(index)];
      const found = this.findFulfillmentOrder(group.fulfillmentOrderId);
      if (!found) return fail([...path, 'fulfillmentOrderId'], 'Fulfillment order does not exist.');
      if (order && found.order !== order)
        return fail([...path, 'fulfillmentOrderId'], 'Fulfillment orders must belong to the same order.');
      order = found.order;
      const fulfillmentOrder = found.fulfillmentOrder;
      if (fulfillmentOrder.status !== 'OPEN' && fulfillmentOrder.status !== 'IN_PROGRESS') {
        return fail(
          ['fulfillment'],
          `Fulfillment order gid://shopify/FulfillmentOrder/${fulfillmentOrder.id} has an unfulfillable status= ${fulfillmentOrder.status.toLowerCase()}.`,
        );
      }
      const requested = group.fulfillmentOrderLineItems;
      if (requested && requested.length > 0) {
        for (const [lineIndex, line] of requested.entries()) {
          const foLine = fulfillmentOrder.lineItems.find((candidate) => candidate.id === line.id);
          if (!foLine)
            return fail(
              [...path, 'fulfillmentOrderLineItems', String(lineIndex), 'id'],
              'Fulfillment order line item does not exist.',
            );
          const alreadyPlanned = planned
            .filter((p) => p.foLineItemId === foLine.id)
            .reduce((s, p) => s + p.quantity, 0);
          if (line.quantity <= 0 || line.quantity + alreadyPlanned > foLine.remainingQuantity) {
            return fail(
              [...path, 'fulfillmentOrderLineItems', String(lineIndex), 'quantity'],
              'Invalid fulfillment order line item quantity requested.',
            );
          }
          planned.push({
            fulfillmentOrder,
            lineItemId: foLine.lineItemId,
            foLineItemId: foLine.id,
            quantity: line.quantity,
          });
        }
      } else {
        for (const foLine of fulfillmentOrder.lineItems) {
          if (foLine.remainingQuantity > 0) {
            planned.push({
              fulfillmentOrder,
              lineItemId: foLine.lineItemId,
              foLineItemId: foLine.id,
              quantity: foLine.remainingQuantity,
            });
          }
        }
      }
    }
    if (!order || planned.length === 0) return fail(['fulfillment'], 'There are no line items to fulfill.');
    const tracking = trackingInfoOf(input.trackingInfo, ['fulfillment', 'trackingInfo']);
    if (!tracking.ok) return tracking;

    const now = this.now();
    for (const step of planned) {
      const foLine = step.fulfillmentOrder.lineItems.find((candidate) => candidate.id === step.foLineItemId);
      const item = order.lineItems.find((candidate) => candidate.id === step.lineItemId);
      if (foLine) foLine.remainingQuantity -= step.quantity;
      if (item) item.fulfilledQuantity += step.quantity;
    }
    const touched = [...new Set(planned.map((step) => step.fulfillmentOrder))];
    for (const fulfillmentOrder of touched) {
      fulfillmentOrder.status = fulfillmentOrder.lineItems.every((line) => line.remainingQuantity === 0)
        ? 'CLOSED'
        : 'IN_PROGRESS';
      fulfillmentOrder.updatedAt = now;
    }
    const fulfillment: StoredFulfillment = {
      id: this.ids.next('Fulfillment'),
      orderId: order.id,
      name: `${order.name}-F${order.fulfillments.length + 1}`,
      status: 'SUCCESS',
      createdAt: now,
      updatedAt: now,
      trackingInfo: tracking.value,
      events: [],
      lineItems: planned.map((step) => ({
        lineItemId: step.lineItemId,
        fulfillmentOrderLineItemId: step.foLineItemId,
        fulfillmentOrderId: step.fulfillmentOrder.id,
        quantity: step.quantity,
      })),
      fulfillmentOrderIds: touched.map((fo) => fo.id),
      notifyCustomer: input.notifyCustomer ?? false,
      message: input.message ?? null,
      deliveredAt: null,
      inTransitAt: null,
      estimatedDeliveryAt: null,
    };
    order.fulfillments.push(fulfillment);
    order.updatedAt = now;
    const status = displayFulfillmentStatus(order);
    const events: ShopEvent[] = [
      { topic: 'fulfillments/create', payload: renderRestFulfillment(order, fulfillment), triggeredAt: now },
      this.orderEvent(status === 'FULFILLED' ? 'ORDERS_FULFILLED' : 'ORDERS_PARTIALLY_FULFILLED', order),
      this.orderEvent('ORDERS_UPDATED', order),
    ];
    return { ok: true, value: fulfillment, events };
  }

  updateTracking(
    fulfillmentId: number | undefined,
    input: TrackingInput,
    notifyCustomer: boolean,
  ): Result<StoredFulfillment> {
    const found = this.findFulfillment(fulfillmentId);
    if (!found) return fail(['fulfillmentId'], 'Fulfillment does not exist.');
    if (found.fulfillment.status === 'CANCELLED')
      return fail(['fulfillmentId'], 'Cannot update tracking information of a cancelled fulfillment.');
    const tracking = trackingInfoOf(input, ['trackingInfoInput']);
    if (!tracking.ok) return tracking;
    const now = this.now();
    found.fulfillment.trackingInfo = tracking.value;
    found.fulfillment.notifyCustomer = notifyCustomer;
    found.fulfillment.updatedAt = now;
    found.order.updatedAt = now;
    return {
      ok: true,
      value: found.fulfillment,
      events: [
        {
          topic: 'fulfillments/update',
          payload: renderRestFulfillment(found.order, found.fulfillment),
          triggeredAt: now,
        },
      ],
    };
  }

  addFulfillmentEvent(input: FulfillmentEventInput): Result<StoredFulfillmentEvent> {
    const found = this.findFulfillment(input.fulfillmentId);
    if (!found) return fail(['fulfillmentEvent', 'fulfillmentId'], 'Fulfillment does not exist.');
    const { order, fulfillment } = found;
    if (fulfillment.status === 'CANCELLED')
      return fail(['fulfillmentEvent', 'fulfillmentId'], 'Cannot create an event for a cancelled fulfillment.');
    const now = this.now();
    const event: StoredFulfillmentEvent = {
      id: this.ids.next('FulfillmentEvent'),
      status: input.status,
      happenedAt: input.happenedAt ? Date.parse(input.happenedAt) : now,
      createdAt: now,
      message: input.message ?? null,
      estimatedDeliveryAt: input.estimatedDeliveryAt ? Date.parse(input.estimatedDeliveryAt) : null,
      address1: input.address1 ?? null,
      city: input.city ?? null,
      province: input.province ?? null,
      country: input.country ?? null,
      zip: input.zip ?? null,
      latitude: input.latitude ?? null,
      longitude: input.longitude ?? null,
    };
    fulfillment.events.push(event);
    fulfillment.updatedAt = now;
    if (event.status === 'DELIVERED') fulfillment.deliveredAt = event.happenedAt;
    if (event.status === 'IN_TRANSIT' && fulfillment.inTransitAt === null) fulfillment.inTransitAt = event.happenedAt;
    if (event.estimatedDeliveryAt !== null) fulfillment.estimatedDeliveryAt = event.estimatedDeliveryAt;
    order.updatedAt = now;
    return {
      ok: true,
      value: event,
      events: [
        {
          topic: 'fulfillment_events/create',
          payload: renderRestFulfillmentEvent(this.shop, order, fulfillment, event),
          triggeredAt: now,
        },
        // The event changes the fulfillment's shipment_status, which Shopify announces as an update.
        { topic: 'fulfillments/update', payload: renderRestFulfillment(order, fulfillment), triggeredAt: now },
      ],
    };
  }

  // ---- metafields -----------------------------------------------------------------------------------

  setMetafields(inputs: MetafieldSetInput[]): Result<StoredMetafield[]> {
    if (inputs.length > 25)
      return failCoded(['metafields'], 'Exceeded the maximum metafields input limit of 25.', 'LESS_THAN_OR_EQUAL_TO');
    const errors: UserError[] = [];
    const checked: {
      order: StoredOrder;
      input: MetafieldSetInput;
      namespace: string;
      type: string;
      existing: StoredMetafield | undefined;
    }[] = [];
    for (const [index, input] of inputs.entries()) {
      const at = (field: string) => ['metafields', String(index), field];
      const order = this.order(input.ownerId);
      if (!order) {
        errors.push({ field: at('ownerId'), message: 'Owner does not exist.', code: 'INVALID', elementIndex: index });
        continue;
      }
      const namespace = input.namespace ?? APP_RESERVED_NAMESPACE;
      if (namespace.length < 3 || namespace.length > 255 || !/^[A-Za-z0-9_-]+$/.test(namespace)) {
        errors.push({ field: at('namespace'), message: 'Namespace is invalid.', code: 'INVALID', elementIndex: index });
        continue;
      }
      if (input.key.length < 2 || input.key.length > 64 || !/^[A-Za-z0-9_-]+$/.test(input.key)) {
        errors.push({ field: at('key'), message: 'Key is invalid.', code: 'INVALID', elementIndex: index });
        continue;
      }
      const existing = order.metafields.find((m) => m.namespace === namespace && m.key === input.key);
      const type = input.type ?? existing?.type;
      if (!type) {
        errors.push({ field: at('type'), message: "Type can't be blank.", code: 'BLANK', elementIndex: index });
        continue;
      }
      if (!METAFIELD_TYPES.has(type)) {
        errors.push({
          field: at('type'),
          message: `Type '${type}' is not a valid type.`,
          code: 'INVALID_TYPE',
          elementIndex: index,
        });
        continue;
      }
      const valueError = metafieldValueError(type, input.value);
      if (valueError) {
        errors.push({ field: at('value'), message: valueError, code: 'INVALID_VALUE', elementIndex: index });
        continue;
      }
      if (
        input.compareDigest !== undefined &&
        input.compareDigest !== null &&
        (!existing || compareDigest(existing) !== input.compareDigest)
      ) {
        errors.push({
          field: at('compareDigest'),
          message:
            'The resource has been updated since it was loaded. Try again with an updated `compareDigest` value.',
          code: 'STALE_OBJECT',
          elementIndex: index,
        });
        continue;
      }
      checked.push({ order, input, namespace, type, existing });
    }
    // metafieldsSet is atomic at Shopify: one bad element and nothing is written.
    if (errors.length > 0) return { ok: false, userErrors: errors };
    const now = this.now();
    const written = checked.map(({ order, input, namespace, type, existing }) => {
      order.updatedAt = now;
      if (existing) {
        existing.value = input.value;
        existing.type = type;
        existing.updatedAt = now;
        return existing;
      }
      const created: StoredMetafield = {
        id: this.ids.next('Metafield'),
        namespace,
        key: input.key,
        type,
        value: input.value,
        createdAt: now,
        updatedAt: now,
      };
      order.metafields.push(created);
      return created;
    });
    // Metafield writes do not trigger orders/updated at Shopify.
    return { ok: true, value: written, events: [] };
  }

  metafieldOwner(metafield: StoredMetafield): StoredOrder | undefined {
    for (const order of this.orders.values()) if (order.metafields.includes(metafield)) return order;
    return undefined;
  }

  // ---- webhook subscriptions and carrier services --------------------------------------------------

  createWebhookSubscription(input: {
    topic: string;
    uri?: string | null;
    callbackUrl?: string | null;
    format?: 'JSON' | 'XML' | null;
    includeFields?: string[] | null;
    metafieldNamespaces?: string[] | null;
    filter?: string | null;
    name?: string | null;
  }): Result<StoredWebhookSubscription> {
    const uri = input.uri ?? input.callbackUrl ?? null;
    const field = ['webhookSubscription', input.uri ? 'uri' : 'callbackUrl'];
    if (!uri) return fail(field, "Address can't be blank");
    if (!isHttpUrl(uri)) return fail(field, 'Address is invalid');
    for (const existing of this.webhookSubscriptions.values()) {
      if (existing.topic === input.topic && existing.uri === uri)
        return fail(field, 'Address for this topic has already been taken');
    }
    const now = this.now();
    const subscription: StoredWebhookSubscription = {
      id: this.ids.next('WebhookSubscription'),
      topic: input.topic,
      uri,
      format: input.format ?? 'JSON',
      includeFields: input.includeFields ?? [],
      metafieldNamespaces: input.metafieldNamespaces ?? [],
      filter: input.filter ?? null,
      name: input.name ?? null,
      createdAt: now,
      updatedAt: now,
    };
    this.webhookSubscriptions.set(subscription.id, subscription);
    return { ok: true, value: subscription, events: [] };
  }

  deleteWebhookSubscription(id: number | undefined): Result<number> {
    if (id === undefined || !this.webhookSubscriptions.delete(id))
      return fail(['id'], 'Webhook subscription does not exist');
    return { ok: true, value: id, events: [] };
  }

  createCarrierService(input: {
    name: string;
    callbackUrl: string;
    active: boolean;
    supportsServiceDiscovery: boolean;
  }): Result<StoredCarrierService> {
    if (!input.name.trim()) return failCoded(['input', 'name'], "Name can't be blank", 'CARRIER_SERVICE_CREATE_FAILED');
    if (!isHttpUrl(input.callbackUrl))
      return failCoded(['input', 'callbackUrl'], 'Callback url is invalid', 'CARRIER_SERVICE_CREATE_FAILED');
    for (const existing of this.carrierServices.values()) {
      if (existing.name === input.name) {
        return failCoded(['input', 'name'], `${input.name} is already configured`, 'CARRIER_SERVICE_CREATE_FAILED');
      }
    }
    const service: StoredCarrierService = { id: this.ids.next('DeliveryCarrierService'), ...input };
    this.carrierServices.set(service.id, service);
    return { ok: true, value: service, events: [] };
  }

  updateCarrierService(
    id: number | undefined,
    changes: {
      name?: string | null;
      callbackUrl?: string | null;
      active?: boolean | null;
      supportsServiceDiscovery?: boolean | null;
    },
  ): Result<StoredCarrierService> {
    const service = id === undefined ? undefined : this.carrierServices.get(id);
    if (!service)
      return failCoded(['input', 'id'], 'The carrier or app could not be found.', 'CARRIER_SERVICE_UPDATE_FAILED');
    if (changes.callbackUrl !== undefined && changes.callbackUrl !== null && !isHttpUrl(changes.callbackUrl)) {
      return failCoded(['input', 'callbackUrl'], 'Callback url is invalid', 'CARRIER_SERVICE_UPDATE_FAILED');
    }
    if (changes.name) service.name = changes.name;
    if (changes.callbackUrl) service.callbackUrl = changes.callbackUrl;
    if (typeof changes.active === 'boolean') service.active = changes.active;
    if (typeof changes.supportsServiceDiscovery === 'boolean')
      service.supportsServiceDiscovery = changes.supportsServiceDiscovery;
    return { ok: true, value: service, events: [] };
  }

  deleteCarrierService(id: number | undefined): Result<number> {
    if (id === undefined || !this.carrierServices.delete(id))
      return failCoded(['id'], 'The carrier or app could not be found.', 'CARRIER_SERVICE_DELETE_FAILED');
    return { ok: true, value: id, events: [] };
  }
}

// ---- helpers ----------------------------------------------------------------------------------------

function fail(field: string[] | null, message: string, code?: string): { ok: false; userErrors: UserError[] } {
  return { ok: false, userErrors: [code === undefined ? { field, message } : { field, message, code }] };
}

function failCoded(field: string[] | null, message: string, code: string): { ok: false; userErrors: UserError[] } {
  return fail(field, message, code);
}

/**
 * Shopify splits comma-separated tags, trims them, drops blanks and duplicates (case-insensitively) and
 * shows them sorted.
 */
export function normaliseTags(tags: string[]): string[] {
  const seen = new Map<string, string>();
  for (const tag of tags.flatMap((entry) => entry.split(','))) {
    const trimmed = tag.trim();
    if (trimmed && !seen.has(trimmed.toLowerCase())) seen.set(trimmed.toLowerCase(), trimmed);
  }
  return [...seen.values()].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }));
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

function trackingInfoOf(
  input: TrackingInput | null | undefined,
  path: string[],
): { ok: true; value: TrackingInfo[] } | { ok: false; userErrors: UserError[] } {
  if (!input) return { ok: true, value: [] };
  const numbers = input.numbers ?? (input.number ? [input.number] : []);
  const urls = input.urls ?? (input.url ? [input.url] : []);
  for (const [index, url] of urls.entries()) {
    if (!isHttpUrl(url)) {
      return fail(input.urls ? [...path, 'urls', String(index)] : [...path, 'url'], `Url "${url}" is not a valid URL.`);
    }
  }
  const count = Math.max(numbers.length, urls.length, input.company ? 1 : 0);
  const value: TrackingInfo[] = [];
  for (let index = 0; index < count; index += 1) {
    value.push({ company: input.company ?? null, number: numbers[index] ?? null, url: urls[index] ?? null });
  }
  return { ok: true, value };
}

const METAFIELD_TYPES = new Set([
  'single_line_text_field',
  'multi_line_text_field',
  'number_integer',
  'number_decimal',
  'boolean',
  'json',
  'date',
  'date_time',
  'url',
  'id',
]);

function metafieldValueError(type: string, value: string): string | undefined {
  switch (type) {
    case 'single_line_text_field':
      return /[\r\n]/.test(value) ? 'Value must be a single line text string.' : undefined;
    case 'number_integer':
      return /^-?\d+$/.test(value) ? undefined : 'Value must be an integer.';
    case 'number_decimal':
      return /^-?\d+(\.\d+)?$/.test(value) ? undefined : 'Value must be a decimal.';
    case 'boolean':
      return value === 'true' || value === 'false' ? undefined : 'Value must be true or false.';
    case 'json':
      try {
        JSON.parse(value);
        return undefined;
      } catch {
        return 'Value is invalid JSON.';
      }
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(value) ? undefined : 'Value must be in YYYY-MM-DD format.';
    case 'date_time':
      return Number.isNaN(Date.parse(value)) ? 'Value must be in ISO 8601 format.' : undefined;
    case 'url':
      return isHttpUrl(value) ? undefined : 'Value must be a valid URL.';
    default:
      return undefined;
  }
}

export function compareDigest(metafield: StoredMetafield): string {
  return createHash('sha256').update(`${metafield.id}:${metafield.updatedAt}:${metafield.value}`).digest('hex');
}

/** For logs and snapshots: the REST timestamp of a model time. */
export function restTimeOrNull(ms: number | null): string | null {
  return ms === null ? null : restTime(ms);
}

/**
 * The tax on a price in hundredths, in whole currency units (XOF has no sub-unit): added on top of `price` when
 * prices exclude tax, the part of `price` that is tax when they include it.
 */
function taxOn(price: number, rate: number, included: boolean): number {
  if (rate === 0 || price === 0) return 0;
  const units = included ? (price / 100) * (rate / (1 + rate)) : (price / 100) * rate;
  return Math.round(units) * 100;
}
