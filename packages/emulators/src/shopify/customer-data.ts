/**
 * Protected customer data. On a store that is not a development store, Shopify gives an app customers' names,
 * addresses, phones and emails only with Level 2 access to those fields; without it they come back as null, in
 * webhook bodies and Admin API reads alike, not as an error. A shop configured with `protectedCustomerData:
 * false` plays an app without that access: what the app is sent of an order goes through `forAppWithoutAccess`.
 * The merchant's own view (the emulator's test helpers) is left whole.
 *
 * Which keys: the person's name (first_name, last_name, name), the street (address1, address2, and the
 * coordinates, which locate the door as precisely), the phone and the email. City, province, zip and country stay.
 */
import type { RestAddress, StoredOrder } from './model.js';

const ADDRESS_KEYS = ['first_name', 'last_name', 'name', 'address1', 'address2', 'phone', 'latitude', 'longitude'];
const CUSTOMER_KEYS = ['first_name', 'last_name', 'email', 'phone'];

function withNulls<T extends Record<string, unknown>>(record: T, keys: readonly string[]): T {
  return { ...record, ...Object.fromEntries(keys.map((key) => [key, null])) };
}

function redactedAddress(address: RestAddress | null): RestAddress | null {
  return address === null ? null : withNulls(address, ADDRESS_KEYS);
}

/** The order as an app without protected customer data access is sent it. */
export function forAppWithoutAccess(order: StoredOrder): StoredOrder {
  const customer = order.customer === null ? null : withNulls(order.customer, CUSTOMER_KEYS);
  if (customer && customer.default_address && typeof customer.default_address === 'object')
    customer.default_address = redactedAddress(customer.default_address as RestAddress);
  return {
    ...order,
    email: null,
    phone: null,
    shippingAddress: redactedAddress(order.shippingAddress),
    billingAddress: redactedAddress(order.billingAddress),
    customer,
  };
}
