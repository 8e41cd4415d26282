/**
 * GraphQL views of the stored model. graphql-js's field resolution reads a property of the same name, and
 * calls it with the field's arguments when it is a function: that is how connections and other fields
 * with arguments are served. Every view carries `__typename`, which graphql-js uses to resolve interfaces
 * (Node, HasMetafields) and unions.
 *
 * A field missing from a view is reported as "not implemented" (see strictFieldResolver) instead of being
 * silently null, so a query that uses more of the schema than the emulator serves fails loudly.
 */
import { GraphQLError, type GraphQLFieldResolver } from 'graphql';
import { gid, graphqlDecimal, graphqlTime } from '../format.js';
import {
  canMarkAsPaid,
  currentQuantity,
  currentTotal,
  displayFulfillmentStatus,
  lineItemsTotal,
  originalTotal,
  outstanding,
  currentShipping,
  shippingTotal,
  totalWeight,
  type RestAddress,
  type StoredCarrierService,
  type StoredFulfillment,
  type StoredFulfillmentEvent,
  type StoredFulfillmentOrder,
  type StoredFulfillmentOrderLineItem,
  type StoredLineItem,
  type StoredMetafield,
  type StoredOrder,
  type StoredWebhookSubscription,
  type UserError,
} from '../model.js';
import { compareDigest, type ShopStore } from '../store.js';
import { connection, type ConnectionArgs } from './connection.js';

export type View = Record<string, unknown>;

/** Serves `source[fieldName]`, calling it with the arguments when it is a function; refuses undefined. */
export const strictFieldResolver: GraphQLFieldResolver<unknown, unknown> = (source, args, context, info) => {
  if (typeof source === 'object' && source !== null) {
    const value: unknown = (source as Record<string, unknown>)[info.fieldName];
    if (typeof value === 'function')
      return (value as (a: unknown, c: unknown, i: unknown) => unknown)(args, context, info);
    if (value !== undefined) return value;
  }
  throw new GraphQLError(
    `The Shopify emulator does not implement ${info.parentType.name}.${info.fieldName}; add it in packages/emulators/src/shopify/graphql/views.ts.`,
    { extensions: { code: 'EMULATOR_NOT_IMPLEMENTED' } },
  );
};

const time = (ms: number | null): string | null => (ms === null ? null : graphqlTime(ms));

export function moneyBag(hundredths: number, shopCurrency: string, presentmentCurrency: string): View {
  return {
    shopMoney: { amount: graphqlDecimal(hundredths), currencyCode: shopCurrency },
    presentmentMoney: { amount: graphqlDecimal(hundredths), currencyCode: presentmentCurrency },
  };
}

export function userErrorViews(errors: UserError[]): View[] {
  return errors.map((error) => ({
    field: error.field,
    message: error.message,
    code: error.code ?? null,
    elementIndex: error.elementIndex ?? null,
  }));
}

function limit<T>(items: T[], first: unknown): T[] {
  return typeof first === 'number' ? items.slice(0, first) : items;
}

function numberOrNull(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export class Views {
  constructor(private readonly store: ShopStore) {}

  private shippingTaxLine(order: StoredOrder, hundredths: number, rate: number, title: string): View {
    return {
      __typename: 'TaxLine',
      title,
      rate,
      ratePercentage: rate * 100,
      channelLiable: false,
      priceSet: this.money(order, hundredths),
    };
  }

  private money(order: StoredOrder, hundredths: number): View {
    return moneyBag(hundredths, order.currency, order.presentmentCurrency);
  }

  order(stored: StoredOrder): View {
    const order = this.store.forApp(stored);
    const money = (amount: number) => this.money(order, amount);
    return {
      __typename: 'Order',
      id: gid('Order', order.id),
      legacyResourceId: String(order.id),
      name: order.name,
      number: order.number,
      confirmationNumber: order.confirmationNumber,
      createdAt: graphqlTime(order.createdAt),
      updatedAt: graphqlTime(order.updatedAt),
      processedAt: graphqlTime(order.processedAt),
      cancelledAt: time(order.cancelledAt),
      cancelReason: order.cancelReason === null ? null : order.cancelReason.toUpperCase(),
      closed: order.closedAt !== null,
      closedAt: time(order.closedAt),
      confirmed: true,
      test: order.test,
      email: order.email,
      phone: order.phone,
      note: order.note,
      poNumber: null,
      sourceName: order.sourceName,
      tags: order.tags,
      customAttributes: order.noteAttributes.map((attribute) => ({ key: attribute.name, value: attribute.value })),
      currencyCode: order.currency,
      presentmentCurrencyCode: order.presentmentCurrency,
      paymentGatewayNames: order.gatewayNames,
      displayFinancialStatus: order.financialStatus.toUpperCase(),
      displayFulfillmentStatus: displayFulfillmentStatus(order),
      canMarkAsPaid: canMarkAsPaid(order),
      fullyPaid: outstanding(order) === 0 && order.paid > 0,
      unpaid: order.paid === 0,
      requiresShipping: order.lineItems.some((item) => item.requiresShipping),
      fulfillable: order.fulfillmentOrders.some((fo) => fo.status === 'OPEN' || fo.status === 'IN_PROGRESS'),
      taxesIncluded: order.taxesIncluded,
      totalPriceSet: money(originalTotal(order)),
      currentTotalPriceSet: money(currentTotal(order)),
      subtotalPriceSet: money(lineItemsTotal(order, false)),
      currentSubtotalPriceSet: money(order.cancelledAt === null ? lineItemsTotal(order, true) : 0),
      totalShippingPriceSet: money(shippingTotal(order)),
      currentShippingPriceSet: money(currentShipping(order)),
      totalDiscountsSet: money(0),
      currentTotalDiscountsSet: money(0),
      totalOutstandingSet: money(outstanding(order)),
      totalReceivedSet: money(order.paid),
      totalWeight: String(totalWeight(order)),
      currentTotalWeight: String(order.lineItems.reduce((sum, item) => sum + item.grams * currentQuantity(item), 0)),
      statusPageUrl: `https://${this.store.shop.domain}/${this.store.shop.shopId}/orders/${order.token}/authenticate?key=emulated`,
      shippingAddress: order.shippingAddress ? this.address(order.shippingAddress, order.id * 10 + 1) : null,
      billingAddress: order.billingAddress ? this.address(order.billingAddress, order.id * 10 + 2) : null,
      displayAddress: order.shippingAddress ? this.address(order.shippingAddress, order.id * 10 + 1) : null,
      shippingLine: order.shippingLines[0] ? this.shippingLine(order, 0) : null,
      shippingLines: (args: ConnectionArgs) =>
        connection(
          order.shippingLines.map((_, index) => index),
          args,
          (index) => ({ id: index, value: index }),
          (index) => this.shippingLine(order, index),
        ),
      lineItems: (args: ConnectionArgs) =>
        connection(
          order.lineItems,
          args,
          (item) => ({ id: item.id, value: item.id }),
          (item) => this.lineItem(order, item),
        ),
      fulfillmentOrders: (args: ConnectionArgs & { displayable?: boolean | null }) => {
        const visible = args.displayable
          ? order.fulfillmentOrders.filter((fo) => fo.status !== 'CLOSED' && fo.status !== 'CANCELLED')
          : order.fulfillmentOrders;
        return connection(
          visible,
          args,
          (fo) => ({ id: fo.id, value: fo.id }),
          (fo) => this.fulfillmentOrder(order, fo),
        );
      },
      fulfillments: (args: { first?: number | null }) =>
        limit(order.fulfillments, args.first).map((f) => this.fulfillment(order, f)),
      metafield: (args: { namespace?: string | null; key: string }) => {
        const found = order.metafields.find(
          (m) => m.key === args.key && (args.namespace == null || m.namespace === args.namespace),
        );
        return found ? this.metafield(order, found) : null;
      },
      metafields: (args: ConnectionArgs & { namespace?: string | null; keys?: string[] | null }) => {
        const wanted = args.keys ? new Set(args.keys) : undefined;
        const selected = order.metafields.filter(
          (m) =>
            (args.namespace == null || m.namespace === args.namespace) &&
            (!wanted || wanted.has(`${m.namespace}.${m.key}`)),
        );
        return connection(
          selected,
          args,
          (m) => ({ id: m.id, value: m.id }),
          (m) => this.metafield(order, m),
        );
      },
    };
  }

  address(address: RestAddress, id: number): View {
    const line = (key: string) => stringOrNull(address[key]);
    const view: View = {
      __typename: 'MailingAddress',
      id: gid('MailingAddress', id),
      address1: line('address1'),
      address2: line('address2'),
      city: line('city'),
      company: line('company'),
      country: line('country'),
      countryCodeV2: line('country_code'),
      countryCode: line('country_code'),
      firstName: line('first_name'),
      lastName: line('last_name'),
      name: line('name') ?? ([line('first_name'), line('last_name')].filter(Boolean).join(' ') || null),
      phone: line('phone'),
      province: line('province'),
      provinceCode: line('province_code'),
      zip: line('zip'),
      latitude: numberOrNull(address.latitude),
      longitude: numberOrNull(address.longitude),
      coordinatesValidated: false,
      timeZone: null,
      formattedArea: [line('city'), line('province'), line('country')].filter(Boolean).join(', ') || null,
      formatted: () =>
        [line('address1'), line('address2'), line('city'), line('province'), line('zip'), line('country')].filter(
          (part) => part,
        ),
    };
    return view;
  }

  shippingLine(order: StoredOrder, index: number): View {
    const line = order.shippingLines[index];
    if (!line) return {};
    return {
      __typename: 'ShippingLine',
      id: gid('ShippingLine', line.id),
      title: line.title,
      code: line.code,
      source: 'shopify',
      carrierIdentifier: null,
      isRemoved: false,
      phone: null,
      originalPriceSet: this.money(order, line.price),
      discountedPriceSet: this.money(order, line.price - line.discount),
      taxLines: line.tax === 0 ? [] : [this.shippingTaxLine(order, line.tax, line.taxRate, line.taxTitle)],
    };
  }

  lineItem(order: StoredOrder, item: StoredLineItem): View {
    return {
      __typename: 'LineItem',
      id: gid('LineItem', item.id),
      name: item.variantTitle ? `${item.title} - ${item.variantTitle}` : item.title,
      title: item.title,
      variantTitle: item.variantTitle,
      sku: item.sku,
      vendor: item.vendor,
      quantity: item.quantity,
      currentQuantity: currentQuantity(item),
      unfulfilledQuantity: Math.max(0, currentQuantity(item) - item.fulfilledQuantity),
      fulfillableQuantity: Math.max(0, currentQuantity(item) - item.fulfilledQuantity),
      requiresShipping: item.requiresShipping,
      customAttributes: [],
      product: null,
      variant: null,
      originalUnitPriceSet: this.money(order, item.price),
      discountedUnitPriceSet: this.money(order, item.price),
      originalTotalSet: this.money(order, item.price * item.quantity),
      discountedTotalSet: () => this.money(order, item.price * item.quantity),
    };
  }

  fulfillmentOrder(order: StoredOrder, fo: StoredFulfillmentOrder): View {
    const fulfillable = fo.status === 'OPEN' || fo.status === 'IN_PROGRESS';
    return {
      __typename: 'FulfillmentOrder',
      id: gid('FulfillmentOrder', fo.id),
      status: fo.status,
      requestStatus: 'UNSUBMITTED',
      createdAt: graphqlTime(fo.createdAt),
      updatedAt: graphqlTime(fo.updatedAt),
      orderId: gid('Order', order.id),
      orderName: order.name,
      orderProcessedAt: graphqlTime(order.processedAt),
      fulfillAt: null,
      fulfillBy: null,
      fulfillmentHolds: [],
      supportedActions: fulfillable ? [{ action: 'CREATE_FULFILLMENT', externalUrl: null }] : [],
      assignedLocation: {
        name: 'Entrepôt Dakar',
        address1: 'Zone industrielle',
        address2: null,
        city: 'Dakar',
        province: null,
        zip: null,
        countryCode: 'SN',
        phone: null,
        location: null,
      },
      destination: null,
      deliveryMethod: null,
      order: () => this.order(order),
      lineItems: (args: ConnectionArgs) =>
        connection(
          fo.lineItems,
          args,
          (line) => ({ id: line.id, value: line.id }),
          (line) => this.fulfillmentOrderLineItem(order, line),
        ),
      fulfillments: (args: ConnectionArgs) =>
        connection(
          order.fulfillments.filter((f) => f.fulfillmentOrderIds.includes(fo.id)),
          args,
          (f) => ({ id: f.id, value: f.id }),
          (f) => this.fulfillment(order, f),
        ),
    };
  }

  fulfillmentOrderLineItem(order: StoredOrder, line: StoredFulfillmentOrderLineItem): View {
    const item = order.lineItems.find((candidate) => candidate.id === line.lineItemId);
    return {
      __typename: 'FulfillmentOrderLineItem',
      id: gid('FulfillmentOrderLineItem', line.id),
      totalQuantity: line.totalQuantity,
      remainingQuantity: line.remainingQuantity,
      requiresShipping: item?.requiresShipping ?? true,
      sku: item?.sku ?? null,
      productTitle: item?.title ?? '',
      variantTitle: item?.variantTitle ?? null,
      vendor: item?.vendor ?? null,
      inventoryItemId: null,
      image: null,
      variant: null,
      warnings: [],
      weight: { unit: 'GRAMS', value: item?.grams ?? 0 },
      lineItem: item ? this.lineItem(order, item) : null,
    };
  }

  fulfillment(order: StoredOrder, fulfillment: StoredFulfillment): View {
    const lastEvent = fulfillment.events.at(-1);
    const displayStatus =
      fulfillment.status === 'CANCELLED'
        ? 'CANCELED'
        : (lastEvent?.status ?? (fulfillment.trackingInfo.length > 0 ? 'FULFILLED' : 'MARKED_AS_FULFILLED'));
    return {
      __typename: 'Fulfillment',
      id: gid('Fulfillment', fulfillment.id),
      legacyResourceId: String(fulfillment.id),
      name: fulfillment.name,
      status: fulfillment.status,
      displayStatus,
      createdAt: graphqlTime(fulfillment.createdAt),
      updatedAt: graphqlTime(fulfillment.updatedAt),
      deliveredAt: time(fulfillment.deliveredAt),
      inTransitAt: time(fulfillment.inTransitAt),
      estimatedDeliveryAt: time(fulfillment.estimatedDeliveryAt),
      requiresShipping: true,
      totalQuantity: fulfillment.lineItems.reduce((sum, line) => sum + line.quantity, 0),
      location: null,
      service: null,
      originAddress: null,
      order: () => this.order(order),
      trackingInfo: (args: { first?: number | null }) =>
        limit(fulfillment.trackingInfo, args.first).map((info) => ({ ...info })),
      events: (args: ConnectionArgs & { sortKey?: string | null }) =>
        connection(
          fulfillment.events,
          args,
          (event) => ({ id: event.id, value: args.sortKey === 'HAPPENED_AT' ? event.happenedAt : event.id }),
          (event) => this.fulfillmentEvent(event),
        ),
      fulfillmentLineItems: (args: ConnectionArgs) =>
        connection(
          fulfillment.lineItems,
          args,
          (line) => ({ id: line.fulfillmentOrderLineItemId, value: line.fulfillmentOrderLineItemId }),
          (line) => {
            const item = order.lineItems.find((candidate) => candidate.id === line.lineItemId);
            return {
              __typename: 'FulfillmentLineItem',
              id: gid('FulfillmentLineItem', line.fulfillmentOrderLineItemId),
              quantity: line.quantity,
              lineItem: item ? this.lineItem(order, item) : null,
              originalTotalSet: this.money(order, (item?.price ?? 0) * line.quantity),
              discountedTotalSet: this.money(order, (item?.price ?? 0) * line.quantity),
            };
          },
        ),
      fulfillmentOrders: (args: ConnectionArgs) =>
        connection(
          order.fulfillmentOrders.filter((fo) => fulfillment.fulfillmentOrderIds.includes(fo.id)),
          args,
          (fo) => ({ id: fo.id, value: fo.id }),
          (fo) => this.fulfillmentOrder(order, fo),
        ),
    };
  }

  fulfillmentEvent(event: StoredFulfillmentEvent): View {
    return {
      __typename: 'FulfillmentEvent',
      id: gid('FulfillmentEvent', event.id),
      status: event.status,
      happenedAt: graphqlTime(event.happenedAt),
      createdAt: graphqlTime(event.createdAt),
      estimatedDeliveryAt: time(event.estimatedDeliveryAt),
      message: event.message,
      address1: event.address1,
      city: event.city,
      province: event.province,
      country: event.country,
      zip: event.zip,
      latitude: event.latitude,
      longitude: event.longitude,
    };
  }

  metafield(order: StoredOrder, metafield: StoredMetafield): View {
    return {
      __typename: 'Metafield',
      id: gid('Metafield', metafield.id),
      legacyResourceId: String(metafield.id),
      namespace: metafield.namespace,
      key: metafield.key,
      type: metafield.type,
      value: metafield.value,
      jsonValue: jsonValueOf(metafield),
      compareDigest: compareDigest(metafield),
      createdAt: graphqlTime(metafield.createdAt),
      updatedAt: graphqlTime(metafield.updatedAt),
      ownerType: 'ORDER',
      owner: () => this.order(order),
      definition: null,
      reference: null,
      description: null,
      sizeInBytes: Buffer.byteLength(metafield.value),
    };
  }

  shop(): View {
    const shop = this.store.shop;
    return {
      __typename: 'Shop',
      id: gid('Shop', shop.shopId),
      name: shop.name,
      email: shop.email,
      contactEmail: shop.email,
      myshopifyDomain: shop.domain,
      currencyCode: shop.currency,
      ianaTimezone: 'Africa/Dakar',
      timezoneAbbreviation: 'GMT',
      taxesIncluded: false,
      url: `https://${shop.domain}`,
      primaryDomain: {
        __typename: 'Domain',
        id: gid('Domain', shop.shopId),
        host: shop.domain,
        url: `https://${shop.domain}`,
        sslEnabled: true,
        localization: null,
        marketWebPresence: null,
      },
    };
  }

  webhookSubscription(subscription: StoredWebhookSubscription, apiVersion: string): View {
    return {
      __typename: 'WebhookSubscription',
      id: gid('WebhookSubscription', subscription.id),
      legacyResourceId: String(subscription.id),
      topic: subscription.topic,
      uri: subscription.uri,
      callbackUrl: subscription.uri,
      endpoint: { __typename: 'WebhookHttpEndpoint', callbackUrl: subscription.uri },
      format: subscription.format,
      includeFields: subscription.includeFields,
      metafieldNamespaces: subscription.metafieldNamespaces,
      metafields: [],
      filter: subscription.filter,
      name: subscription.name,
      createdAt: graphqlTime(subscription.createdAt),
      updatedAt: graphqlTime(subscription.updatedAt),
      apiVersion: { __typename: 'ApiVersion', handle: apiVersion, displayName: apiVersion, supported: true },
    };
  }

  carrierService(service: StoredCarrierService): View {
    return {
      __typename: 'DeliveryCarrierService',
      id: gid('DeliveryCarrierService', service.id),
      name: service.name,
      formattedName: service.name,
      callbackUrl: service.callbackUrl,
      active: service.active,
      supportsServiceDiscovery: service.supportsServiceDiscovery,
      icon: {
        __typename: 'Image',
        id: null,
        url: 'https://cdn.shopify.com/s/images/admin/shipping/carrier-service.png',
        altText: null,
        width: null,
        height: null,
      },
      availableServicesForCountries: () => [],
    };
  }
}

function jsonValueOf(metafield: StoredMetafield): unknown {
  switch (metafield.type) {
    case 'json':
      return JSON.parse(metafield.value) as unknown;
    case 'number_integer':
      return Number(metafield.value);
    case 'number_decimal':
      return metafield.value;
    case 'boolean':
      return metafield.value === 'true';
    default:
      return metafield.value;
  }
}
