/**
 * The one door into the stores: platform payloads go in, StoreOrders (or a hold reason) come out.
 * Nothing outside src/stores/ imports a platform module directly.
 */
import type { Redis } from 'ioredis';
import type { ShopConfig } from '../config/shops.js';
import type { Logger } from '../log.js';
import type { ShopWriter } from './writer.js';
import { normaliseShopifyOrder } from './shopify/normalise.js';
import { normaliseWooOrder } from './woocommerce/normalise.js';
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

export interface WriterDeps {
  redis: Redis;
  prefix: string;
  logger: Logger;
}

/** The write-back client for a shop. Until the platform writers land, nothing is written back. */
export function createShopWriter(_shop: ShopConfig, _deps: WriterDeps): ShopWriter | undefined {
  return undefined;
}
