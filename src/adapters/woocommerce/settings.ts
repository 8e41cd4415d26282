/** A WooCommerce shop as the shop registry gives it, its settings validated by ./settings-schema.ts. */
import type { ShopOf } from '../../shops/shops.js';

export type WooShopConfig = ShopOf<'woocommerce'>;
