import { describe, expect, it } from 'vitest';
import { ownerOfWooPayload } from './owner.js';

const linkedTo = (href: string) => ({ id: 727, _links: { self: [{ href }] } });

describe("a WooCommerce order body's store, read from its REST link", () => {
  it("confirms the shop's own address, whatever its scheme, www. prefix or trailing slash", () => {
    const shop = 'https://boutique.example.ci/';
    expect(ownerOfWooPayload(shop, linkedTo('http://www.boutique.example.ci/wp-json/wc/v3/orders/727'))).toEqual({
      kind: 'confirmed',
    });
  });

  it('reads the plain-permalink form (?rest_route=) as well', () => {
    const shop = 'https://boutique.example.ci';
    const body = linkedTo('https://boutique.example.ci/?rest_route=/wc/v3/orders/727');
    expect(ownerOfWooPayload(shop, body)).toEqual({ kind: 'confirmed' });
  });

  it('tells apart two stores of one WordPress network on the same host, each in its own folder', () => {
    const shop = 'https://reseau.example.sn/dakar';
    const body = linkedTo('https://reseau.example.sn/thies/wp-json/wc/v3/orders/727');
    expect(ownerOfWooPayload(shop, body)).toEqual({ kind: 'other_store', found: 'reseau.example.sn/thies' });
  });

  it('names no store for a body without a REST link (order.deleted) or with a link that is not one', () => {
    const shop = 'https://boutique.example.ci';
    expect(ownerOfWooPayload(shop, { id: 727 }).kind).toBe('unnamed');
    expect(ownerOfWooPayload(shop, linkedTo('https://boutique.example.ci/orders/727')).kind).toBe('unnamed');
  });
});
