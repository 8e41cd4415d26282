import { describe, expect, it } from 'vitest';
import { ownerOfShopifyEvent, SHOPIFY_OWNER_RULES } from './owner.js';
import { shopifyWebhooks } from './webhooks.js';

const SHOP = 'dakar-mode.myshopify.com';
const OTHER = 'lome-style.myshopify.com';

describe('the table of how each Shopify topic names its shop', () => {
  it('has a rule for every topic Relais acts on (orders, uninstall, compliance) and for no other', () => {
    const actedOn = [
      ...shopifyWebhooks.orderTopics,
      ...shopifyWebhooks.complianceTopics,
      ...(shopifyWebhooks.uninstallTopic ? [shopifyWebhooks.uninstallTopic] : []),
    ];
    expect([...SHOPIFY_OWNER_RULES.keys()].sort()).toEqual(actedOn.sort());
  });

  it('refuses a topic it has no rule for', () => {
    expect(ownerOfShopifyEvent(SHOP, 'products/update', { myshopify_domain: SHOP }).kind).toBe('unnamed');
  });
});

describe('app/uninstalled names its shop in the shop resource', () => {
  it("confirms the header's shop from myshopify_domain, even when the primary domain is a custom one", () => {
    const body = { id: 1, domain: 'www.dakar-mode.sn', myshopify_domain: SHOP };
    expect(ownerOfShopifyEvent(SHOP, 'app/uninstalled', body)).toEqual({ kind: 'confirmed' });
  });

  it("finds another shop's myshopify_domain, whatever the case the header is written in", () => {
    const body = { id: 2, domain: SHOP, myshopify_domain: OTHER };
    expect(ownerOfShopifyEvent('Dakar-Mode.myshopify.com', 'app/uninstalled', body)).toEqual({
      kind: 'other_shop',
      found: OTHER,
    });
  });

  it('falls back on domain only when it is a myshopify domain, and refuses a body that names neither', () => {
    expect(ownerOfShopifyEvent(SHOP, 'app/uninstalled', { domain: OTHER })).toEqual({
      kind: 'other_shop',
      found: OTHER,
    });
    expect(ownerOfShopifyEvent(SHOP, 'app/uninstalled', { domain: 'www.dakar-mode.sn' }).kind).toBe('unnamed');
    expect(ownerOfShopifyEvent(SHOP, 'app/uninstalled', {}).kind).toBe('unnamed');
  });
});

describe('the compliance topics name their shop in shop_domain', () => {
  it.each(['customers/data_request', 'customers/redact', 'shop/redact'])(
    '%s: confirmed by shop_domain, another shop found, no shop_domain refused',
    (topic) => {
      expect(ownerOfShopifyEvent(SHOP, topic, { shop_id: 1, shop_domain: SHOP })).toEqual({ kind: 'confirmed' });
      expect(ownerOfShopifyEvent(SHOP, topic, { shop_id: 1, shop_domain: OTHER })).toEqual({
        kind: 'other_shop',
        found: OTHER,
      });
      expect(ownerOfShopifyEvent(SHOP, topic, { shop_id: 1 }).kind).toBe('unnamed');
    },
  );

  it("does not take an order's status page as a compliance body's owner", () => {
    const body = { shop_id: 1, order_status_url: `https://${SHOP}/1/orders/a/authenticate?key=k` };
    expect(ownerOfShopifyEvent(SHOP, 'shop/redact', body).kind).toBe('unnamed');
  });
});

describe('the order topics name their shop in the order status page', () => {
  it.each(['orders/create', 'orders/paid', 'orders/updated', 'orders/cancelled'])(
    "%s: this shop's myshopify host confirmed, another's refused, a custom host or none asked of the Admin API",
    (topic) => {
      const at = (host: string) => ({ id: 1, order_status_url: `https://${host}/1/orders/a/authenticate?key=k` });
      expect(ownerOfShopifyEvent(SHOP, topic, at(SHOP))).toEqual({ kind: 'confirmed' });
      expect(ownerOfShopifyEvent(SHOP, topic, at(OTHER))).toEqual({ kind: 'other_shop', found: OTHER });
      expect(ownerOfShopifyEvent(SHOP, topic, at('www.dakar-mode.sn')).kind).toBe('ask_admin');
      expect(ownerOfShopifyEvent(SHOP, topic, { id: 1 }).kind).toBe('ask_admin');
    },
  );

  it("does not take a shop_domain as an order body's owner: an order is placed by its status page only", () => {
    expect(ownerOfShopifyEvent(SHOP, 'orders/create', { id: 1, shop_domain: SHOP }).kind).toBe('ask_admin');
  });
});
