/**
 * Shopify's protected customer data. On a store that is not a development store, an app sees customers' names,
 * addresses, phones and emails only with Level 2 access to those fields: a public app requests it and Shopify
 * reviews the request; an app made in the Dev Dashboard for the merchant's own store enables the fields there
 * itself. Without it Shopify sends those fields as null, in webhook bodies and Admin API reads alike, not as an
 * error. Relais dispatches deliveries: it needs the name, address and phone fields.
 *
 * So an order whose shipping address came with every one of those fields null, while the rest of the address
 * (city, country…) is there, is held as `customer_data_redacted`, saying which access is missing and where to
 * ask for it, rather than as "no neighbourhood" or "no phone" in an address that was never wrong. And `relais
 * doctor` (and the Connect page's "Check and switch on") checks the app's granted scopes and reads the shop's
 * latest orders' shipping fields before the shop is switched on.
 */
import { z } from 'zod';
import type { HoldReason } from '../../domain/order.js';
import type { CheckResult } from '../../domain/checks.js';
import { nonEmpty } from '../../shops/platforms/common.js';
import type { ShopifyAdminClient } from './admin.js';
import type { ShopifyAddressPayload, ShopifyOrderPayload } from './payload.js';
import { scopeCovers, SHOPIFY_FIELD_SCOPES } from './scopes.js';

/** Where the access is asked for, in the words of Shopify's documentation. */
export const CUSTOMER_DATA_ACCESS =
  "protected customer data access (Level 2) to the Name, Address and Phone fields, chosen in the Dev Dashboard under the app's " +
  "protected customer data access (a public app then goes through Shopify's data protection review; an app made for " +
  'your own store needs none)';

export function customerDataRedactedHold(orderName: string): HoldReason {
  return {
    code: 'customer_data_redacted',
    message: `order ${orderName} came from Shopify without the customer's name, street address and phone: Shopify hides them (sends them empty) from an app without ${CUSTOMER_DATA_ACCESS}. The address was not wrong. Once the access is granted, replay the order.`,
  };
}

/** The address fields Shopify sends as null without Level 2 access: the person's name, the street, the phone. */
const PROTECTED_ADDRESS_FIELDS = ['first_name', 'last_name', 'name', 'address1', 'address2', 'phone'] as const;
/** What Shopify still sends of a redacted address. */
const OPEN_ADDRESS_FIELDS = ['city', 'province', 'zip', 'country', 'country_code'] as const;

/**
 * Whether the order's delivery address (shipping, else billing) came redacted: its street is null and so is every
 * other protected field, while the rest of the address is there. A genuinely incomplete address still has the
 * name or the street Shopify's checkout asks for; an order without any address is not this case either.
 */
export function customerDataRedacted(
  order: Pick<ShopifyOrderPayload, 'shipping_address' | 'billing_address'>,
): boolean {
  const address = order.shipping_address ?? order.billing_address;
  return address !== null && address !== undefined && addressRedacted(address);
}

function addressRedacted(address: ShopifyAddressPayload): boolean {
  return (
    address.address1 === null &&
    PROTECTED_ADDRESS_FIELDS.every((field) => address[field] === null || address[field] === undefined) &&
    OPEN_ADDRESS_FIELDS.some((field) => nonEmpty(address[field]) !== undefined)
  );
}

// ---- relais doctor ------------------------------------------------------------------------------------------

/** How many of the latest orders are read: the first with a shipping address tells. */
const ORDERS_READ = 5;

export const CUSTOMER_DATA_DOCUMENTS = {
  customerDataScopes: `query RelaisDoctorGrantedScopes {
  currentAppInstallation { accessScopes { handle } }
}`,
  customerDataOrders: `query RelaisDoctorCustomerData($first: Int!) {
  orders(first: $first, reverse: true, sortKey: CREATED_AT) {
    nodes { name shippingAddress { firstName lastName name address1 address2 phone city province zip countryCodeV2 } }
  }
}`,
} as const;

const graphqlAddress = z.object({
  firstName: z.string().nullish(),
  lastName: z.string().nullish(),
  name: z.string().nullish(),
  address1: z.string().nullish(),
  address2: z.string().nullish(),
  phone: z.string().nullish(),
  city: z.string().nullish(),
  province: z.string().nullish(),
  zip: z.string().nullish(),
  countryCodeV2: z.string().nullish(),
});
const scopesSchema = z.object({
  currentAppInstallation: z.object({ accessScopes: z.array(z.object({ handle: z.string() })) }),
});
const ordersSchema = z.object({
  orders: z.object({ nodes: z.array(z.object({ name: z.string(), shippingAddress: graphqlAddress.nullish() })) }),
});

const NAME = 'customer data (protected, Level 2)';

/** The app may read orders (its granted scopes), and the latest order with a shipping address shows the customer. */
export async function checkShopifyCustomerData(admin: ShopifyAdminClient): Promise<CheckResult> {
  let answer: z.output<typeof ordersSchema>;
  try {
    // Without read_orders the order read below fails and says nothing of customer data: the scopes first.
    const { currentAppInstallation } = scopesSchema.parse(
      await admin.query(CUSTOMER_DATA_DOCUMENTS.customerDataScopes, {}, 'RelaisDoctorGrantedScopes'),
    );
    const granted = currentAppInstallation.accessScopes.map((s) => s.handle);
    const needed = SHOPIFY_FIELD_SCOPES['QueryRoot.orders'] ?? 'read_orders';
    if (!scopeCovers(granted, needed))
      return {
        name: NAME,
        status: 'error',
        detail: `the app is not granted ${needed} (granted: ${granted.join(', ') || 'none'}), so it cannot read orders`,
        fix: 'reinstall the app from the Connect page, accepting the scopes it asks for',
      };
    answer = ordersSchema.parse(
      await admin.query(CUSTOMER_DATA_DOCUMENTS.customerDataOrders, { first: ORDERS_READ }, 'RelaisDoctorCustomerData'),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Shopify refuses an object outright ("not approved to access the MailingAddress object") without Level 1.
    if (/not approved|protected customer data/i.test(message))
      return {
        name: NAME,
        status: 'error',
        detail: `Shopify refused to show an order's address: ${message}`,
        fix: CUSTOMER_DATA_ACCESS,
      };
    return { name: NAME, status: 'error', detail: `could not read the app's scopes and latest orders: ${message}` };
  }
  const latest = answer.orders.nodes.find((order) => order.shippingAddress);
  if (!latest?.shippingAddress)
    return {
      name: NAME,
      status: 'ok',
      detail: `scopes granted; no order with a shipping address yet to show whether Shopify hides customers' names, addresses and phones (Relais needs ${CUSTOMER_DATA_ACCESS})`,
    };
  const address = latest.shippingAddress;
  const redacted = addressRedacted({
    first_name: address.firstName,
    last_name: address.lastName,
    name: address.name,
    address1: address.address1,
    address2: address.address2,
    phone: address.phone,
    city: address.city,
    province: address.province,
    zip: address.zip,
    country_code: address.countryCodeV2,
  });
  if (redacted)
    return {
      name: NAME,
      status: 'error',
      detail: `Shopify hides customers' names, street addresses and phones from Relais's app (order ${latest.name} reads with them empty): every order would be held as customer_data_redacted`,
      fix: `ask for ${CUSTOMER_DATA_ACCESS}, then run the check again`,
    };
  return {
    name: NAME,
    status: 'ok',
    detail: `scopes granted; order ${latest.name} shows the customer's name, address and phone`,
  };
}
