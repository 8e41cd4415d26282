/**
 * Orders as WooCommerce core changes them, reduced to what a delivery integration observes:
 *
 *  - Every save bumps `date_modified` and fires `woocommerce_update_order` (HPOS data store), so one REST call
 *    can save several times; webhooks deduplicate per request (`WC_Webhook::is_already_processed`).
 *  - Creating an order saves it (order.created) and then saves it again while totals are calculated
 *    (order.updated): core sends both webhooks for a new order (woocommerce/woocommerce#43019).
 *  - Status changes add the system note "Order status changed from X to Y." and set `date_paid` /
 *    `date_completed` (`WC_Order::set_status`, `maybe_set_date_paid`). The cash-on-delivery gateway makes
 *    `completed` the "payment complete" status, so a COD order gets `date_paid` only when it is completed.
 *  - `set_paid: true` runs `payment_complete()` only when creating or when the order still needs payment
 *    (pending or failed with a total above zero); on a processing COD order it does nothing.
 *  - meta_data: `update_meta_data(key, value, id)`: with an id, that row is updated (key and value); with no
 *    id, the first row with the key is updated and its duplicates deleted; no match adds a row (after
 *    deleting any row with the key). A null value deletes.
 */
import type { WpError } from './auth.js';
import {
  ORDER_STATUS_LABELS,
  emptyAddress,
  floatval,
  formatDecimal,
  formatWpDate,
  newOrderKey,
  storedDecimal,
  taxOnShipping,
  toSeconds,
  type Address,
  type LineItem,
  type MetaEntry,
  type Order,
  type OrderNote,
  type OrderStatus,
  type ShippingLine,
  type ShopSettings,
  type ShopState,
} from './model.js';
import type {
  AddressInput,
  FeeLineInput,
  LineItemInput,
  MetaInput,
  OrderListParams,
  OrderWriteInput,
  ShippingLineInput,
} from './schemas.js';
import { addRefund, fullyRefunded, type RefundInput } from './refunds.js';

export type OrderEvent = 'created' | 'updated';

export interface OrderEnv {
  shop: ShopState;
  now(): Date;
  wcVersion: string;
  /** What add_order_note() stores as the author of system notes ("WooCommerce" in English). */
  systemNoteAuthor: string;
}

export class OrderWriteError extends Error {
  override readonly name = 'OrderWriteError';
  constructor(readonly wpError: WpError) {
    super(wpError.message);
  }
}

const restError = (code: string, message: string, status = 400): OrderWriteError =>
  new OrderWriteError({ code, message, status });

const PAYMENT_COMPLETE_FROM: readonly OrderStatus[] = ['on-hold', 'pending', 'failed', 'cancelled'];
const NEEDS_PAYMENT_STATUSES: readonly OrderStatus[] = ['pending', 'failed'];
const EDITABLE_STATUSES: readonly string[] = ['pending', 'on-hold', 'auto-draft', 'checkout-draft'];

/** One request's worth of work on an order: its saves, its pending status transition, its events. */
class OrderSession {
  readonly events: OrderEvent[] = [];
  private transition: { from: OrderStatus; to: OrderStatus; note: string; manual: boolean } | undefined;
  private isNew: boolean;

  constructor(
    private readonly env: OrderEnv,
    readonly order: Order,
    isNew: boolean,
  ) {
    this.isNew = isNew;
  }

  setStatus(to: OrderStatus, note = '', manual = false): void {
    const from = this.order.status;
    if (from === to) return;
    this.order.status = to;
    this.transition = { from: this.transition?.from ?? from, to, note, manual };
    this.maybeSetDatePaid();
    if (to === 'completed') this.order.dateCompleted = this.stamp();
  }

  save(): void {
    const now = this.stamp();
    this.order.version = this.env.wcVersion;
    this.order.dateModified = now;
    saveMeta(this.env.shop, this.order.meta);
    for (const item of this.order.lineItems) saveMeta(this.env.shop, item.meta);
    if (this.isNew) {
      this.order.dateCreated = now;
      this.env.shop.orders.set(this.order.id, this.order);
      this.events.push('created');
      this.isNew = false;
    } else {
      this.events.push('updated');
    }
    const transition = this.transition;
    this.transition = undefined;
    if (transition) {
      const text = `Order status changed from ${ORDER_STATUS_LABELS[transition.from]} to ${ORDER_STATUS_LABELS[transition.to]}.`;
      addOrderNote(this.env, this.order, `${transition.note} ${text}`.trim(), false, transition.manual);
    }
  }

  calculateTotals(): void {
    const order = this.order;
    order.shippingTotal = order.shippingLines.reduce((sum, line) => sum + line.total, 0);
    order.shippingTax = order.shippingLines.reduce((sum, line) => sum + this.shippingTaxOf(line), 0);
    const items = order.lineItems.reduce((sum, line) => sum + line.total, 0);
    const fees = order.feeLines.reduce((sum, line) => sum + line.total, 0);
    order.total = Math.max(0, items + fees + order.shippingTotal + order.shippingTax - order.discountTotal);
    this.save();
  }

  /** Shipping costs are before tax; the rate is applied to them, rounded to the shop's decimals. */
  shippingTaxOf(line: ShippingLine): number {
    return shippingTax(line, this.env.shop.settings);
  }

  paymentComplete(transactionId: string | undefined): void {
    if (!PAYMENT_COMPLETE_FROM.includes(this.order.status)) return;
    if (transactionId) this.order.transactionId = transactionId;
    if (!this.order.datePaid) this.order.datePaid = this.stamp();
    this.setStatus(paymentCompleteStatus(this.order));
    this.save();
  }

  private maybeSetDatePaid(): void {
    if (this.order.datePaid) return;
    const paidStatus = paymentCompleteStatus(this.order);
    if (this.order.status === paidStatus || (paidStatus === 'processing' && this.order.status === 'completed')) {
      this.order.datePaid = this.stamp();
    }
  }

  private stamp(): Date {
    return toSeconds(this.env.now());
  }
}

/**
 * `woocommerce_payment_complete_order_status`: `processing` for goods that need shipping, turned into
 * `completed` by the cash-on-delivery gateway for its own orders (WC_Gateway_COD, since 3.1).
 */
function paymentCompleteStatus(order: Order): OrderStatus {
  return order.paymentMethod === 'cod' ? 'completed' : 'processing';
}

export function needsPayment(order: Order): boolean {
  return NEEDS_PAYMENT_STATUSES.includes(order.status) && order.total > 0;
}

function newOrder(env: OrderEnv): Order {
  const now = toSeconds(env.now());
  return {
    id: env.shop.newPostId(),
    parentId: 0,
    status: 'pending',
    currency: env.shop.settings.currency,
    version: env.wcVersion,
    dateCreated: now,
    dateModified: now,
    dateCompleted: null,
    datePaid: null,
    discountTotal: 0,
    shippingTotal: 0,
    shippingTax: 0,
    total: 0,
    customerId: 0,
    orderKey: newOrderKey(),
    billing: emptyAddress(true),
    shipping: emptyAddress(false),
    paymentMethod: '',
    paymentMethodTitle: '',
    transactionId: '',
    customerIpAddress: '',
    customerUserAgent: '',
    createdVia: '',
    customerNote: '',
    meta: [],
    lineItems: [],
    shippingLines: [],
    feeLines: [],
    notes: [],
    trashed: false,
    refunds: [],
    setPaidRequested: false,
  };
}

/** POST /orders (`WC_REST_Orders_V2_Controller::save_object` with `$creating`). */
export function createOrderViaRest(env: OrderEnv, input: OrderWriteInput): { order: Order; events: OrderEvent[] } {
  const order = newOrder(env);
  applyWritableProps(env, order, input);
  order.createdVia = 'rest-api';
  if (input.set_paid === true) order.setPaidRequested = true;
  const session = new OrderSession(env, order, true);
  session.save();
  session.calculateTotals();
  if (input.status) session.setStatus(input.status);
  session.save();
  if (input.set_paid === true) session.paymentComplete(input.transaction_id);
  return { order, events: session.events };
}

/**
 * An order placed at the storefront checkout: created pending, then the gateway's process_payment()
 * (cash on delivery: processing with "Payment to be made upon delivery."; bank transfer and cheque: on hold;
 * otherwise payment_complete() when `set_paid` is true). An explicit `status` replaces the gateway step.
 */
export function createOrderViaCheckout(env: OrderEnv, input: OrderWriteInput): { order: Order; events: OrderEvent[] } {
  const order = newOrder(env);
  applyWritableProps(env, order, input);
  order.createdVia = 'checkout';
  if (input.set_paid === true) order.setPaidRequested = true;
  const session = new OrderSession(env, order, true);
  session.calculateTotals();
  if (input.status) {
    session.setStatus(input.status);
    session.save();
  } else if (order.paymentMethod === 'cod' && order.total > 0) {
    session.setStatus('processing', 'Payment to be made upon delivery.');
    session.save();
  } else if (order.paymentMethod === 'bacs') {
    session.setStatus('on-hold', 'Awaiting BACS payment');
    session.save();
  } else if (order.paymentMethod === 'cheque') {
    session.setStatus('on-hold', 'Awaiting check payment');
    session.save();
  } else if (input.set_paid === true || order.total === 0) {
    session.paymentComplete(input.transaction_id);
  }
  return { order, events: session.events };
}

/**
 * A refund made from the order's admin page (`wc_create_refund`): the order keeps its totals, lists the refund, and is
 * saved (order.updated); a refund of all that was left makes it `refunded`.
 */
export function refundOrderViaAdmin(env: OrderEnv, order: Order, input: RefundInput): { events: OrderEvent[] } {
  addRefund(order, input, { settings: env.shop.settings, newId: () => env.shop.newPostId(), now: env.now() });
  const session = new OrderSession(env, order, false);
  if (fullyRefunded(order)) session.setStatus('refunded');
  session.save();
  return { events: session.events };
}

/**
 * Moves the order to the trash, or brings it back (`wc_get_order()->delete(false)`, `untrash`): the status read is
 * `trash` meanwhile, and the order gets its earlier status back. Core fires `woocommerce_trash_order` and
 * `woocommerce_untrash_order` (order.deleted, order.restored), not an update.
 */
export function setTrashed(env: OrderEnv, order: Order, trashed: boolean): void {
  order.trashed = trashed;
  order.dateModified = toSeconds(env.now());
}

/** PUT /orders/{id} (`save_object` without `$creating`). */
export function updateOrderViaRest(
  env: OrderEnv,
  order: Order,
  input: OrderWriteInput,
): { order: Order; events: OrderEvent[] } {
  // Work on a copy so a validation error leaves the stored order untouched, as a failed request does.
  const draft = structuredClone(order);
  applyWritableProps(env, draft, input);
  if (input.set_paid === true) draft.setPaidRequested = true;
  Object.assign(order, draft);
  const session = new OrderSession(env, order, false);
  const itemsChanged = ['billing', 'shipping', 'line_items', 'shipping_lines', 'fee_lines', 'coupon_lines'].some(
    (key) => (input as Record<string, unknown>)[key] !== undefined,
  );
  if (itemsChanged) session.calculateTotals();
  if (input.status) session.setStatus(input.status);
  session.save();
  if (input.set_paid === true && needsPayment(order)) session.paymentComplete(input.transaction_id);
  return { order, events: session.events };
}

export function addOrderNote(
  env: OrderEnv,
  order: Order,
  text: string,
  customerNote: boolean,
  addedByUser: boolean,
): OrderNote {
  const note: OrderNote = {
    id: env.shop.newCommentId(),
    note: text,
    customerNote,
    author: addedByUser ? env.shop.settings.apiUserDisplayName : env.systemNoteAuthor,
    createdAt: toSeconds(env.now()),
  };
  order.notes.push(note);
  return note;
}

function applyWritableProps(env: OrderEnv, order: Order, input: OrderWriteInput): void {
  if (input.parent_id !== undefined) order.parentId = input.parent_id;
  if (input.currency !== undefined) order.currency = input.currency;
  if (input.customer_id !== undefined) {
    if (input.customer_id !== 0) throw restError('woocommerce_rest_invalid_customer_id', 'Customer ID is invalid.');
    order.customerId = 0;
  }
  if (input.customer_note !== undefined) order.customerNote = input.customer_note;
  if (input.billing) updateAddress(order.billing, input.billing);
  if (input.shipping) updateAddress(order.shipping, input.shipping);
  if (input.payment_method !== undefined) order.paymentMethod = input.payment_method;
  if (input.payment_method_title !== undefined) order.paymentMethodTitle = input.payment_method_title;
  if (input.transaction_id !== undefined) order.transactionId = input.transaction_id;
  for (const line of input.line_items ?? []) setLineItem(env, order, line);
  for (const line of input.shipping_lines ?? []) setShippingLine(env, order, line);
  for (const line of input.fee_lines ?? []) setFeeLine(env, order, line);
  for (const meta of input.meta_data ?? []) updateMetaData(order.meta, meta);
}

function updateAddress(target: Address, input: AddressInput): void {
  for (const key of Object.keys(target) as (keyof Address)[]) {
    const value = input[key];
    if (typeof value === 'string') target[key] = value;
  }
}

/** `update_meta_data($key, $value, $meta_id)`, with deletions (null values) applied at save. */
export function updateMetaData(meta: MetaEntry[], input: MetaInput): void {
  const value = input.value === undefined ? null : input.value;
  let index = -1;
  if (input.id) {
    index = meta.findIndex((entry) => entry.id === input.id);
  } else {
    const matches = meta.flatMap((entry, i) => (entry.key === input.key ? [i] : []));
    if (matches.length > 0) {
      index = matches[0] ?? -1;
      for (const duplicate of matches.slice(1)) {
        const entry = meta[duplicate];
        if (entry) entry.value = null;
      }
    }
  }
  const target = index >= 0 ? meta[index] : undefined;
  if (target) {
    target.key = input.key;
    target.value = value;
    return;
  }
  // add_meta_data($key, $value, unique: true): the new row replaces every row with the key.
  for (const entry of meta) if (entry.key === input.key) entry.value = null;
  meta.push({ id: 0, key: input.key, value });
}

/** `save_meta_data()`: rows set to null disappear, new rows get their ids. */
function saveMeta(shop: ShopState, meta: MetaEntry[]): void {
  for (let i = meta.length - 1; i >= 0; i--) if (meta[i]?.value === null) meta.splice(i, 1);
  for (const entry of meta) if (entry.id === 0) entry.id = shop.newMetaId();
}

/** `item_is_null()`: an item posted with any of these keys set to null is a request to remove it. */
function isNullItem(item: Record<string, unknown>): boolean {
  return ['product_id', 'method_id', 'method_title', 'name', 'code'].some((key) => key in item && item[key] === null);
}

function setLineItem(env: OrderEnv, order: Order, posted: LineItemInput): void {
  if (isNullItem(posted) || posted.quantity === 0) {
    order.lineItems = order.lineItems.filter((item) => item.id !== posted.id);
    return;
  }
  let item: LineItem | undefined;
  const action = posted.id ? 'update' : 'create';
  if (posted.id) {
    item = order.lineItems.find((existing) => existing.id === posted.id);
    if (!item)
      throw restError('woocommerce_rest_invalid_item_id', 'Order item ID provided is not associated with order.');
  }
  const productRef = productReference(env, posted, action === 'create');
  if (!item) {
    item = {
      id: env.shop.newItemId(),
      name: '',
      productId: 0,
      variationId: 0,
      quantity: 1,
      subtotal: 0,
      total: 0,
      taxClass: '',
      meta: [],
    };
    order.lineItems.push(item);
  }
  const quantity = posted.quantity ?? (action === 'create' ? 1 : item.quantity);
  if (productRef && (productRef.productId !== item.productId || productRef.variationId !== item.variationId)) {
    item.productId = productRef.productId;
    item.variationId = productRef.variationId;
    item.name = productRef.name;
    if (action === 'create') {
      item.total = productRef.price * quantity;
      item.subtotal = item.total;
    }
  }
  if (posted.name != null) item.name = posted.name;
  if (posted.quantity != null) item.quantity = posted.quantity;
  else if (action === 'create') item.quantity = 1;
  if (posted.total != null) item.total = floatval(posted.total);
  if (posted.subtotal != null) item.subtotal = floatval(posted.subtotal);
  if (posted.tax_class != null) item.taxClass = posted.tax_class;
  for (const meta of posted.meta_data ?? []) updateMetaData(item.meta, meta);
}

interface ProductRef {
  productId: number;
  variationId: number;
  name: string;
  price: number;
}

/** `get_product_id()` then `wc_get_product()`: by SKU, product id or variation id; unknown ids give nothing. */
function productReference(env: OrderEnv, posted: LineItemInput, creating: boolean): ProductRef | undefined {
  const shop = env.shop;
  let id: number;
  if (posted.sku) {
    const bySku =
      [...shop.products.values()].find((p) => p.sku === posted.sku) ??
      [...shop.variations.values()].find((v) => v.sku === posted.sku);
    id = bySku?.id ?? 0;
  } else if (posted.product_id && !posted.variation_id) {
    id = posted.product_id;
  } else if (posted.variation_id) {
    id = posted.variation_id;
  } else if (!creating) {
    return undefined;
  } else {
    throw restError('woocommerce_rest_required_product_reference', 'Product ID or SKU is required.');
  }
  const product = shop.products.get(id);
  if (product) {
    const price = floatval(product.regularPrice || lowestVariationPrice(env, product.variationIds));
    return { productId: product.id, variationId: 0, name: product.name, price };
  }
  const variation = shop.variations.get(id);
  const parent = variation ? shop.products.get(variation.parentId) : undefined;
  if (variation && parent) {
    const options = variation.attributes.map((attribute) => attribute.option).filter((option) => option !== '');
    return {
      productId: parent.id,
      variationId: variation.id,
      name: options.length > 0 ? `${parent.name} - ${options.join(', ')}` : parent.name,
      price: floatval(variation.regularPrice),
    };
  }
  return undefined;
}

function lowestVariationPrice(env: OrderEnv, variationIds: readonly number[]): string {
  const prices = variationIds
    .map((id) => env.shop.variations.get(id)?.regularPrice ?? '')
    .filter((price) => price !== '')
    .map(Number);
  return prices.length > 0 ? storedDecimal(Math.min(...prices)) : '';
}

function setShippingLine(env: OrderEnv, order: Order, posted: ShippingLineInput): void {
  if (isNullItem(posted)) {
    order.shippingLines = order.shippingLines.filter((line) => line.id !== posted.id);
    return;
  }
  let line = posted.id ? order.shippingLines.find((existing) => existing.id === posted.id) : undefined;
  if (posted.id && !line)
    throw restError('woocommerce_rest_invalid_item_id', 'Order item ID provided is not associated with order.');
  if (!line) {
    if (!posted.method_id) throw restError('woocommerce_rest_invalid_shipping_item', 'Shipping method ID is required.');
    line = { id: env.shop.newItemId(), methodId: '', methodTitle: '', instanceId: '', total: 0, meta: [] };
    order.shippingLines.push(line);
  }
  if (posted.method_id != null) line.methodId = posted.method_id;
  if (posted.method_title != null) line.methodTitle = posted.method_title;
  if (posted.instance_id != null) line.instanceId = posted.instance_id;
  if (posted.total != null) line.total = floatval(posted.total);
  for (const meta of posted.meta_data ?? []) updateMetaData(line.meta, meta);
}

function setFeeLine(env: OrderEnv, order: Order, posted: FeeLineInput): void {
  if (isNullItem(posted)) {
    order.feeLines = order.feeLines.filter((line) => line.id !== posted.id);
    return;
  }
  let line = posted.id ? order.feeLines.find((existing) => existing.id === posted.id) : undefined;
  if (posted.id && !line)
    throw restError('woocommerce_rest_invalid_item_id', 'Order item ID provided is not associated with order.');
  if (!line) {
    if (!posted.name) throw restError('woocommerce_rest_invalid_fee_item', 'Fee name is required.');
    line = { id: env.shop.newItemId(), name: '', total: 0, taxClass: '', taxStatus: 'taxable', meta: [] };
    order.feeLines.push(line);
  }
  if (posted.name != null) line.name = posted.name;
  if (posted.total != null) line.total = floatval(posted.total);
  if (posted.tax_class != null) line.taxClass = posted.tax_class;
  if (posted.tax_status != null) line.taxStatus = posted.tax_status;
  for (const meta of posted.meta_data ?? []) updateMetaData(line.meta, meta);
}

const metaJson = (meta: readonly MetaEntry[]) =>
  meta.map((entry) => ({ id: entry.id, key: entry.key, value: entry.value }));

const itemMetaJson = (meta: readonly MetaEntry[]) =>
  meta.map((entry) => ({
    id: entry.id,
    key: entry.key,
    value: entry.value,
    display_key: entry.key,
    display_value: entry.value,
  }));

/** GET /orders/{id} in the `view` context (also the body of order.* webhooks). */
export function orderJson(env: OrderEnv, order: Order, homeUrl: string, dp?: number): Record<string, unknown> {
  const { settings } = env.shop;
  const decimals = dp ?? settings.priceDecimals;
  const money = (value: number) => formatDecimal(value, decimals);
  const local = (date: Date | null) => formatWpDate(date, settings.utcOffsetMinutes, false);
  const gmt = (date: Date | null) => formatWpDate(date, settings.utcOffsetMinutes, true);
  const rest = `${homeUrl}/wp-json/wc/v3`;
  const links: Record<string, { href: string }[]> = {
    self: [{ href: `${rest}/orders/${order.id}` }],
    collection: [{ href: `${rest}/orders` }],
  };
  if (order.customerId !== 0) links.customer = [{ href: `${rest}/customers/${order.customerId}` }];
  if (order.parentId !== 0) links.up = [{ href: `${rest}/orders/${order.parentId}` }];

  return {
    id: order.id,
    parent_id: order.parentId,
    number: String(order.id),
    order_key: order.orderKey,
    created_via: order.createdVia,
    version: order.version,
    status: order.trashed ? 'trash' : order.status,
    currency: order.currency,
    date_created: local(order.dateCreated),
    date_created_gmt: gmt(order.dateCreated),
    date_modified: local(order.dateModified),
    date_modified_gmt: gmt(order.dateModified),
    discount_total: money(order.discountTotal),
    discount_tax: money(0),
    shipping_total: money(order.shippingTotal),
    shipping_tax: money(order.shippingTax),
    cart_tax: money(0),
    total: money(order.total),
    total_tax: money(order.shippingTax),
    prices_include_tax: false,
    customer_id: order.customerId,
    customer_ip_address: order.customerIpAddress,
    customer_user_agent: order.customerUserAgent,
    customer_note: order.customerNote,
    billing: { ...order.billing },
    shipping: { ...order.shipping },
    payment_method: order.paymentMethod,
    payment_method_title: order.paymentMethodTitle,
    transaction_id: order.transactionId,
    date_paid: local(order.datePaid),
    date_paid_gmt: gmt(order.datePaid),
    date_completed: local(order.dateCompleted),
    date_completed_gmt: gmt(order.dateCompleted),
    cart_hash: '',
    meta_data: metaJson(order.meta),
    line_items: order.lineItems.map((item) => {
      const product = env.shop.products.get(item.productId);
      const variation = item.variationId ? env.shop.variations.get(item.variationId) : undefined;
      const sku = variation ? variation.sku || (product?.sku ?? '') : product ? product.sku : null;
      return {
        id: item.id,
        name: item.name,
        product_id: item.productId,
        variation_id: item.variationId,
        quantity: item.quantity,
        tax_class: item.taxClass,
        subtotal: money(item.subtotal),
        subtotal_tax: money(0),
        total: money(item.total),
        total_tax: money(0),
        taxes: [],
        meta_data: itemMetaJson(item.meta),
        sku,
        price: item.quantity ? item.total / item.quantity : 0,
        image: { id: '', src: '' },
        parent_name: variation && product ? product.name : null,
      };
    }),
    tax_lines:
      order.shippingTax === 0
        ? []
        : [
            {
              id: order.id * 10 + 1,
              rate_code: 'SN-TVA-1',
              rate_id: STANDARD_RATE_ID,
              label: 'TVA',
              compound: false,
              rate_percent: settings.shippingTaxRate * 100,
              tax_total: money(0),
              shipping_tax_total: money(order.shippingTax),
              meta_data: [],
            },
          ],
    shipping_lines: order.shippingLines.map((line) => ({
      id: line.id,
      method_title: line.methodTitle,
      method_id: line.methodId,
      instance_id: line.instanceId,
      total: money(line.total),
      total_tax: money(shippingTax(line, settings)),
      taxes:
        shippingTax(line, settings) === 0
          ? []
          : [{ id: STANDARD_RATE_ID, total: storedDecimal(shippingTax(line, settings)), subtotal: '' }],
      tax_status: 'taxable',
      meta_data: itemMetaJson(line.meta),
    })),
    fee_lines: order.feeLines.map((line) => ({
      id: line.id,
      name: line.name,
      tax_class: line.taxClass,
      tax_status: line.taxStatus,
      amount: storedDecimal(line.total),
      total: money(line.total),
      total_tax: money(0),
      taxes: [],
      meta_data: itemMetaJson(line.meta),
    })),
    coupon_lines: [],
    // The order lists each refund by its total only (negative); what it refunded is at GET /orders/{id}/refunds.
    refunds: [...order.refunds]
      .reverse()
      .map((refund) => ({ id: refund.id, reason: refund.reason, total: money(-refund.amount) })),
    payment_url: `${homeUrl}/checkout/order-pay/${order.id}/?pay_for_order=true&key=${order.orderKey}`,
    is_editable: EDITABLE_STATUSES.includes(order.status),
    needs_payment: needsPayment(order),
    needs_processing: true,
    _links: links,
  };
}

export function noteJson(env: OrderEnv, order: Order, note: OrderNote, homeUrl: string): Record<string, unknown> {
  const { utcOffsetMinutes } = env.shop.settings;
  const base = `${homeUrl}/wp-json/wc/v3/orders/${order.id}`;
  return {
    id: note.id,
    // Core compares the stored author with the lowercase translation of "woocommerce"; add_order_note()
    // stores "WooCommerce", so system notes read "WooCommerce" (the docs' examples show "system").
    author: note.author === 'woocommerce' ? 'system' : note.author,
    date_created: formatWpDate(note.createdAt, utcOffsetMinutes, false),
    date_created_gmt: formatWpDate(note.createdAt, utcOffsetMinutes, true),
    note: note.note,
    customer_note: note.customerNote,
    _links: {
      self: [{ href: `${base}/notes/${note.id}` }],
      collection: [{ href: `${base}/notes` }],
      up: [{ href: base }],
    },
  };
}

/** Filters and sorts orders for GET /orders (CRUD controller query: `date` and `modified` sort by id too). */
export function queryOrders(env: OrderEnv, params: OrderListParams): Order[] {
  const offsetMs = env.shop.settings.utcOffsetMinutes * 60_000;
  const asInstant = (text: string): number => {
    const hasZone = /([Zz]|[+-]\d{2}(:?\d{2})?)$/.test(text);
    const normalised = text.replace(' ', 'T');
    if (hasZone) return Date.parse(normalised);
    const wallClock = Date.parse(`${normalised}Z`);
    return params.dates_are_gmt ? wallClock : wallClock - offsetMs;
  };
  const statuses = params.status ?? ['any'];
  let orders = [...env.shop.orders.values()];
  // `any` is every status but the trash, as in core; `trash` asks for the trashed ones.
  const statusOf = (order: Order) => (order.trashed ? 'trash' : order.status);
  if (statuses.includes('any')) orders = orders.filter((order) => !order.trashed);
  else orders = orders.filter((order) => statuses.includes(statusOf(order)));
  if (params.include && params.include.length > 0)
    orders = orders.filter((order) => params.include?.includes(order.id));
  if (params.exclude && params.exclude.length > 0)
    orders = orders.filter((order) => !params.exclude?.includes(order.id));
  if (params.customer !== undefined) orders = orders.filter((order) => order.customerId === params.customer);
  if (params.product !== undefined) {
    orders = orders.filter((order) => order.lineItems.some((item) => item.productId === params.product));
  }
  const after = params.after === undefined ? undefined : asInstant(params.after);
  const before = params.before === undefined ? undefined : asInstant(params.before);
  const modifiedAfter = params.modified_after === undefined ? undefined : asInstant(params.modified_after);
  const modifiedBefore = params.modified_before === undefined ? undefined : asInstant(params.modified_before);
  orders = orders.filter((order) => {
    const created = order.dateCreated.getTime();
    const modified = order.dateModified.getTime();
    return (
      (after === undefined || created > after) &&
      (before === undefined || created < before) &&
      (modifiedAfter === undefined || modified > modifiedAfter) &&
      (modifiedBefore === undefined || modified < modifiedBefore)
    );
  });
  const direction = params.order === 'asc' ? 1 : -1;
  const orderby = params.orderby ?? 'date';
  const include = params.include ?? [];
  orders.sort((a, b) => {
    let primary = 0;
    if (orderby === 'date') primary = a.dateCreated.getTime() - b.dateCreated.getTime();
    else if (orderby === 'modified') primary = a.dateModified.getTime() - b.dateModified.getTime();
    else if (orderby === 'include') return include.indexOf(a.id) - include.indexOf(b.id);
    else if (orderby === 'title' || orderby === 'slug') primary = 0;
    return direction * (primary !== 0 ? primary : a.id - b.id);
  });
  return orders;
}

/** The one tax rate the emulated shop has (its id in `tax_lines[].rate_id` and the lines' `taxes[].id`). */
const STANDARD_RATE_ID = 1;

function shippingTax(line: ShippingLine, settings: ShopSettings): number {
  return taxOnShipping(line.total, settings);
}
