/**
 * Registers Relais as the shop's carrier service, for `relais doctor --fix`: Shopify then asks
 * POST {publicUrl}/checkout/shopify/{shopId}/rates for delivery prices at checkout.
 *
 * Admin GraphQL 2026-10 (checked against the schema in @shopify/dev-mcp, and validated in a unit test):
 *  - query `carrierServices(first, after)` → DeliveryCarrierServiceConnection { nodes { id name callbackUrl active } pageInfo }
 *  - mutation `carrierServiceCreate(input: DeliveryCarrierServiceCreateInput!)`, input
 *    { name: String!, callbackUrl: URL!, active: Boolean!, supportsServiceDiscovery: Boolean! }
 *  - mutation `carrierServiceUpdate(input: DeliveryCarrierServiceUpdateInput!)`, input { id: ID!, name, callbackUrl, active, ... }
 *  - both answer `userErrors { field message code }`, which never throw: they are read here.
 * The app needs the `write_shipping` scope, and the store a plan with carrier-calculated shipping (Advanced or higher,
 * yearly billing, or a development store): otherwise carrierServiceCreate answers a userError, reported as is.
 *
 * Which existing service is ours: the one calling our URL. A service with our name but another URL is ours from an
 * earlier public URL (Shopify refuses a second service with the same name), so its URL is updated. A service of ours
 * that the merchant deactivated is reported, never reactivated behind their back.
 *
 * The caller brings the Admin API: `request(query, variables)` resolves with the GraphQL response (`{ data, errors }`)
 * or with its `data` alone.
 */
import { z } from 'zod';
import { SHOPIFY_RATES_PATH } from './checkout-rates.js';
import type { ShopifyShopConfig } from './settings.js';

export type AdminGraphqlRequest = (query: string, variables: Record<string, unknown>) => Promise<unknown>;

export type CarrierServiceRegistration =
  | { status: 'present'; id: string; callbackUrl: string }
  | { status: 'created'; id: string; callbackUrl: string }
  | { status: 'updated'; id: string; callbackUrl: string; previousCallbackUrl: string | null }
  | { status: 'inactive'; id: string; callbackUrl: string; message: string }
  | { status: 'failed'; callbackUrl: string; message: string };

export const CARRIER_SERVICES_QUERY = `query RelaisCarrierServices($after: String) {
  carrierServices(first: 50, after: $after) {
    nodes { id name callbackUrl active }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const CARRIER_SERVICE_CREATE_MUTATION = `mutation RelaisCarrierServiceCreate($input: DeliveryCarrierServiceCreateInput!) {
  carrierServiceCreate(input: $input) {
    carrierService { id name callbackUrl active }
    userErrors { field message code }
  }
}`;

export const CARRIER_SERVICE_UPDATE_MUTATION = `mutation RelaisCarrierServiceUpdate($input: DeliveryCarrierServiceUpdateInput!) {
  carrierServiceUpdate(input: $input) {
    carrierService { id name callbackUrl active }
    userErrors { field message code }
  }
}`;

/** Shopify accounts cannot have thousands of carrier services; this bounds a misbehaving cursor. */
const MAX_PAGES = 20;

const serviceSchema = z.object({
  id: z.string(),
  name: z.string().nullish(),
  callbackUrl: z.string().nullish(),
  active: z.boolean(),
});
export type CarrierService = z.output<typeof serviceSchema>;

const listSchema = z.object({
  carrierServices: z.object({
    nodes: z.array(serviceSchema),
    pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullish() }),
  }),
});
const userErrorsSchema = z.array(
  z.object({ field: z.array(z.string()).nullish(), message: z.string(), code: z.string().nullish() }),
);
const createSchema = z.object({
  carrierServiceCreate: z.object({ carrierService: serviceSchema.nullish(), userErrors: userErrorsSchema }),
});
const updateSchema = z.object({
  carrierServiceUpdate: z.object({ carrierService: serviceSchema.nullish(), userErrors: userErrorsSchema }),
});

/** The callback URL Shopify must call for this shop. */
export function carrierServiceCallbackUrl(shop: ShopifyShopConfig, publicUrl: string): string {
  const base = new URL(publicUrl);
  base.pathname = `${base.pathname.replace(/\/+$/, '')}${SHOPIFY_RATES_PATH.replace(':shopId', encodeURIComponent(shop.id))}`;
  base.search = '';
  base.hash = '';
  return base.href;
}

export async function registerCarrierService(
  shop: ShopifyShopConfig,
  deps: { request: AdminGraphqlRequest; publicUrl: string },
): Promise<CarrierServiceRegistration> {
  const callbackUrl = carrierServiceCallbackUrl(shop, deps.publicUrl);
  const name = shop.policy.checkoutRates.serviceName;
  let services: CarrierService[];
  try {
    services = await listCarrierServices(deps.request);
  } catch (error) {
    return {
      status: 'failed',
      callbackUrl,
      message: `could not list the shop's carrier services: ${messageOf(error)}`,
    };
  }

  const ours = services.find((s) => s.callbackUrl === callbackUrl);
  if (ours) {
    return ours.active
      ? { status: 'present', id: ours.id, callbackUrl }
      : {
          status: 'inactive',
          id: ours.id,
          callbackUrl,
          message: `the carrier service "${ours.name ?? name}" exists but is inactive: the merchant turned it off in Shopify`,
        };
  }

  const sameName = services.find((s) => s.name === name);
  if (sameName) {
    try {
      const answer = updateSchema.parse(
        dataOf(await deps.request(CARRIER_SERVICE_UPDATE_MUTATION, { input: { id: sameName.id, callbackUrl } })),
      );
      const errors = answer.carrierServiceUpdate.userErrors;
      if (errors.length > 0)
        return { status: 'failed', callbackUrl, message: `carrierServiceUpdate refused: ${describe(errors)}` };
      if (!sameName.active) {
        return {
          status: 'inactive',
          id: sameName.id,
          callbackUrl,
          message: `the carrier service "${name}" now calls ${callbackUrl}, but it is inactive: the merchant turned it off in Shopify`,
        };
      }
      return { status: 'updated', id: sameName.id, callbackUrl, previousCallbackUrl: sameName.callbackUrl ?? null };
    } catch (error) {
      return { status: 'failed', callbackUrl, message: `carrierServiceUpdate failed: ${messageOf(error)}` };
    }
  }

  try {
    const answer = createSchema.parse(
      dataOf(
        await deps.request(CARRIER_SERVICE_CREATE_MUTATION, {
          input: { name, callbackUrl, active: true, supportsServiceDiscovery: true },
        }),
      ),
    );
    const { carrierService, userErrors } = answer.carrierServiceCreate;
    if (userErrors.length > 0 || !carrierService) {
      return {
        status: 'failed',
        callbackUrl,
        message: `carrierServiceCreate refused: ${describe(userErrors) || 'no carrier service returned'}`,
      };
    }
    return { status: 'created', id: carrierService.id, callbackUrl };
  } catch (error) {
    return { status: 'failed', callbackUrl, message: `carrierServiceCreate failed: ${messageOf(error)}` };
  }
}

export async function listCarrierServices(request: AdminGraphqlRequest): Promise<CarrierService[]> {
  const all: CarrierService[] = [];
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const list: z.output<typeof listSchema> = listSchema.parse(
      dataOf(await request(CARRIER_SERVICES_QUERY, { after })),
    );
    all.push(...list.carrierServices.nodes);
    const { hasNextPage, endCursor } = list.carrierServices.pageInfo;
    if (!hasNextPage || !endCursor) return all;
    after = endCursor;
  }
  return all;
}

const responseSchema = z
  .object({ data: z.unknown().optional(), errors: z.array(z.object({ message: z.string() }).loose()).optional() })
  .loose();

/** `{ data, errors }` or bare data; top-level errors (throttling, a missing scope) become an exception. */
function dataOf(response: unknown): unknown {
  const parsed = responseSchema.safeParse(response);
  if (parsed.success && (parsed.data.errors !== undefined || 'data' in parsed.data)) {
    if (parsed.data.errors && parsed.data.errors.length > 0)
      throw new Error(parsed.data.errors.map((e) => e.message).join('; '));
    return parsed.data.data;
  }
  return response;
}

function describe(errors: z.output<typeof userErrorsSchema>): string {
  return errors
    .map((e) => `${e.field?.join('.') ?? '(input)'}: ${e.message}${e.code ? ` (${e.code})` : ''}`)
    .join('; ');
}

function messageOf(error: unknown): string {
  if (error instanceof z.ZodError) return 'the Admin API answered something that is not the expected shape';
  return error instanceof Error ? error.message : String(error);
}
