/**
 * The one door into the stores: platform payloads go in, StoreOrders (or a hold reason) come out.
 * Nothing outside src/stores/ imports a platform module directly.
 */
import type { Redis } from 'ioredis';
import type { ShopConfig } from '../config/shops.js';
import type { Logger } from '../log.js';
import type { ShopWriter } from './writer.js';
import { normaliseShopifyOrder } from './shopify/normalise.js';
import { createShopifyWriter } from './shopify/writer.js';
import { normaliseWooOrder, utcIso } from './woocommerce/normalise.js';
import { fillWooWeights } from './woocommerce/weights.js';
import { createWooWriter, wooRestFor } from './woocommerce/writer.js';
import { createShopifyOrderLister } from './shopify/orders.js';
import { createWooOrderLister } from './woocommerce/orders.js';
import type { StoreOrder } from '../domain/order.js';
import type { NormaliseContext, NormaliseResult } from './shopify/normalise.js';

export type { NormaliseResult };

export function normaliseContext(shop: ShopConfig): NormaliseContext {
  return {
    shopId: shop.id,
    codGateways: shop.policy.codGateways,
    depositGateways: shop.policy.depositGateways,
    businessAccountGateways: shop.policy.businessAccountGateways,
  };
}

export function normaliseOrder(shop: ShopConfig, payload: unknown): NormaliseResult {
  const context = normaliseContext(shop);
  return shop.platform === 'shopify' ? normaliseShopifyOrder(payload, context) : normaliseWooOrder(payload, context);
}

/** The platform's order id in a payload, even one too broken to normalise (for holding it visibly). */
export function orderIdOf(payload: unknown): string | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const id = (payload as { id?: unknown }).id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
  if (typeof id === 'string' && /^\d+$/.test(id)) return id;
  const gid = (payload as { admin_graphql_api_id?: unknown }).admin_graphql_api_id;
  if (typeof gid === 'string') return /\/(\d+)$/.exec(gid)?.[1];
  return undefined;
}

/**
 * The order's own last-modified time in a payload (Shopify updated_at, WooCommerce date_modified_gmt, else
 * date_modified), even one too broken to normalise; undefined when it carries none. Normalised orders carry
 * the same value as `updatedAt`.
 */
export function orderVersionOf(platform: ShopConfig['platform'], payload: unknown): string | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const p = payload as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  if (platform === 'shopify') return text(p.updated_at);
  return utcIso(text(p.date_modified_gmt)) ?? text(p.date_modified);
}

export interface WriterDeps {
  redis: Redis;
  prefix: string;
  logger: Logger;
}

/** The write-back client for a shop; undefined for a platform whose writer has not landed (nothing is written back). */
export function createShopWriter(shop: ShopConfig, deps: WriterDeps): ShopWriter | undefined {
  switch (shop.platform) {
    case 'shopify': return createShopifyWriter(shop, deps);
    case 'woocommerce': return createWooWriter(shop, deps);
  }
}

/** Fills in the weights a platform leaves off its orders; undefined when the orders already carry them. */
export type WeightFiller = (order: StoreOrder) => Promise<StoreOrder>;

/**
 * WooCommerce line items carry no weight: this reads it from the shop's products (cached in Redis).
 * Shopify orders carry grams already, so nothing is needed for them.
 */
export function createWeightFiller(shop: ShopConfig, deps: WriterDeps): WeightFiller | undefined {
  if (shop.platform !== 'woocommerce') return undefined;
  const logger = deps.logger.child({ shop: shop.id });
  const rest = wooRestFor(shop, logger);
  // fillWooWeights binds the order's shop itself: given the parent logger, or the line would say "shop" twice.
  return (order) => fillWooWeights(order, { rest, redis: deps.redis, prefix: deps.prefix, logger: deps.logger });
}

// ---- reading a shop's orders (reconciliation, src/reconcile) -------------------------------------------

/** Which orders to read: those created or changed since this instant. */
export interface OrderWindow {
  updatedSince: Date;
}

export interface ShopOrderPage {
  /** Each the order as the shop's webhooks carry it (give it to normaliseOrder, or replay it as a shop event). */
  payloads: unknown[];
  /** Opaque: pass it back to page() for the next page; absent on the last one. */
  next?: string;
}

/** A shop's orders, page by page, in the platform's own paging (Shopify cursors, WooCommerce page numbers). */
export interface ShopOrderLister {
  page(window: OrderWindow, next?: string): Promise<ShopOrderPage>;
  /** One order in full, as a webhook would carry it; undefined when the shop has no such order. */
  order(orderId: string): Promise<unknown>;
}

export function createOrderLister(shop: ShopConfig, deps: { logger: Logger }): ShopOrderLister {
  return shop.platform === 'shopify' ? createShopifyOrderLister(shop, deps) : createWooOrderLister(shop, deps);
}
