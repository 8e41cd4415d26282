import { describe, expect, it } from 'vitest';
import { shopifyOrderPayload, WITHOUT_ANY_PHONE, type JsonOverrides } from '../../../test/support/factories.js';
import type { NormaliseContext } from '../../shops/platforms/common.js';
import { normaliseShopifyOrder } from './normalise.js';

const ctx: NormaliseContext = { shopId: 'dakar-mode', codGateways: [] };

/** What Shopify sends of an address to an app without protected customer data access. */
const REDACTED_ADDRESS = {
  first_name: null,
  last_name: null,
  name: null,
  address1: null,
  address2: null,
  phone: null,
  latitude: null,
  longitude: null,
};

function outcome(overrides: JsonOverrides) {
  const result = normaliseShopifyOrder(shopifyOrderPayload(overrides), ctx);
  return result.ok ? { code: 'dispatch', message: '' } : result.hold;
}

describe('an order whose customer data Shopify redacted', () => {
  it('is held as customer_data_redacted, saying which access the app lacks and where to ask for it', () => {
    const hold = outcome({
      shipping_address: REDACTED_ADDRESS,
      billing_address: REDACTED_ADDRESS,
      customer: { first_name: null, last_name: null, phone: null, default_address: REDACTED_ADDRESS },
      phone: null,
      email: null,
      contact_email: null,
    });
    expect(hold.code).toBe('customer_data_redacted');
    expect(hold.message).toMatch(/without the customer's name, street address and phone/);
    expect(hold.message).toMatch(/protected customer data access \(Level 2\) to the Name, Address and Phone fields/);
    expect(hold.message).toMatch(/Dev Dashboard/);
    expect(hold.message).toMatch(/replay the order/);
  });

  it('is told apart from a genuinely incomplete address, which is held or shipped as before', () => {
    // The street missing but the name there: an address the customer left incomplete, not a redacted one.
    expect(outcome({ shipping_address: { address1: null, address2: null } }).code).not.toBe('customer_data_redacted');
    // No phone anywhere, the rest there: no_phone, as before.
    expect(outcome(WITHOUT_ANY_PHONE).code).toBe('no_phone');
    // No address at all: no_delivery_address, as before.
    expect(outcome({ shipping_address: null, billing_address: null }).code).toBe('no_delivery_address');
    // Every field of the address empty, city and country included: nothing says Shopify redacted it.
    const empty = Object.fromEntries(
      ['city', 'province', 'province_code', 'zip', 'country', 'country_code', 'company'].map((k) => [k, null]),
    );
    expect(outcome({ shipping_address: { ...REDACTED_ADDRESS, ...empty }, billing_address: null }).code).not.toBe(
      'customer_data_redacted',
    );
  });

  it('a cancelled order with a redacted address is not held: its cancellation still goes through', () => {
    expect(
      outcome({ shipping_address: REDACTED_ADDRESS, cancelled_at: new Date().toISOString(), cancel_reason: 'customer' })
        .code,
    ).toBe('dispatch');
  });
});
