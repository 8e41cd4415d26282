/**
 * registerCarrierService, for `relais doctor --fix`: its documents and variables are checked against Shopify's
 * real Admin schema 2026-10 (the introspection in @shopify/dev-mcp), then it is run against the Shopify emulator
 * (which executes on that same schema), and Shopify's own rate request is sent by the emulator to the callback
 * URL it registered: the whole path a merchant's checkout takes.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import {
  buildClientSchema,
  getVariableValues,
  parse,
  validate,
  type GraphQLSchema,
  type IntrospectionQuery,
  type OperationDefinitionNode,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CARRIER_SERVICE_CREATE_MUTATION,
  CARRIER_SERVICE_UPDATE_MUTATION,
  CARRIER_SERVICES_QUERY,
  carrierServiceCallbackUrl,
  registerCarrierService,
  type AdminGraphqlRequest,
} from '../../src/adapters/shopify/carrier-service.js';
import type { ShopifyShopConfig } from '../../src/adapters/shopify/settings.js';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startCheckoutStack, type CheckoutStack } from './stack.js';

function loadAdminSchema(): GraphQLSchema {
  const file = new URL('../../node_modules/@shopify/dev-mcp/dist/data/admin_2026-10.json.gz', import.meta.url);
  const json = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as {
    data?: IntrospectionQuery;
  } & Partial<IntrospectionQuery>;
  return buildClientSchema((json.data ?? json) as IntrospectionQuery);
}

/** Validates a document and the variables sent with it, as Shopify does before executing anything. */
function checkAgainstSchema(schema: GraphQLSchema, query: string, variables: Record<string, unknown>): string[] {
  const document = parse(query);
  const problems = validate(schema, document).map((e) => e.message);
  const operation = document.definitions[0] as OperationDefinitionNode;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  return [...problems, ...(coerced.errors ?? []).map((e) => e.message)];
}

describe('registerCarrierService documents', () => {
  let schema: GraphQLSchema;
  beforeAll(() => {
    schema = loadAdminSchema();
  });

  it('sends only documents and variables that Admin GraphQL 2026-10 accepts', async () => {
    const sent: { query: string; variables: Record<string, unknown> }[] = [];
    const answers = [
      {
        data: {
          carrierServices: {
            nodes: [
              {
                id: 'gid://shopify/DeliveryCarrierService/1',
                name: 'Relais — livraison',
                callbackUrl: 'https://old.example.com/x',
                active: true,
              },
            ],
            pageInfo: { hasNextPage: false, endCursor: null },
          },
        },
      },
      { data: { carrierServiceUpdate: { carrierService: null, userErrors: [] } } },
    ];
    const request: AdminGraphqlRequest = async (query, variables) => {
      sent.push({ query, variables });
      return (
        answers.shift() ?? {
          data: { carrierServices: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null } } },
        }
      );
    };
    const shop = {
      id: 'dakar-mode',
      policy: { checkoutRates: { serviceName: 'Relais — livraison' } },
    } as ShopifyShopConfig;
    await registerCarrierService(shop, { request, publicUrl: 'https://relais.example.com' });
    await registerCarrierService(shop, { request, publicUrl: 'https://relais.example.com' });
    expect(sent.map((s) => s.query)).toEqual([
      CARRIER_SERVICES_QUERY,
      CARRIER_SERVICE_UPDATE_MUTATION,
      CARRIER_SERVICES_QUERY,
      CARRIER_SERVICE_CREATE_MUTATION,
    ]);
    for (const { query, variables } of sent) expect(checkAgainstSchema(schema, query, variables)).toEqual([]);
  });

  it('would be caught sending a field the 2026-10 input does not have', () => {
    const wrong = {
      input: {
        name: 'Relais',
        callbackUrl: 'https://relais.example.com/x',
        active: true,
        supportsServiceDiscovery: true,
        format: 'json',
      },
    };
    expect(checkAgainstSchema(schema, CARRIER_SERVICE_CREATE_MUTATION, wrong).join(' ')).toMatch(/format/);
  });
});

describe('registerCarrierService against the Shopify emulator', () => {
  let stack: CheckoutStack;
  let shopify: ShopifyEmulator;
  let request: AdminGraphqlRequest;
  let shop: ShopifyShopConfig;

  beforeAll(async () => {
    stack = await startCheckoutStack();
    const found = stack.shops.get(SHOPIFY_SHOP_ID);
    if (found?.platform !== 'shopify') throw new Error('the test registry has no Shopify shop');
    shop = found;
    shopify = await startShopifyEmulator({
      shops: [
        {
          domain: SHOPIFY_DOMAIN,
          accessToken: stack.secrets.shopifyAccessToken,
          clientSecret: stack.secrets.shopifyClientSecret,
        },
      ],
    });
    request = async (query, variables) => {
      const response = await fetch(shopify.graphqlUrl(SHOPIFY_DOMAIN), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Shopify-Access-Token': stack.secrets.shopifyAccessToken },
        body: JSON.stringify({ query, variables }),
      });
      return response.json();
    };
  });
  afterAll(async () => {
    await shopify?.close();
    await stack?.stop();
  });

  it('creates the carrier service once, and finds it the second time', async () => {
    const first = await registerCarrierService(shop, { request, publicUrl: stack.web.url });
    expect(first).toMatchObject({
      status: 'created',
      callbackUrl: `${stack.web.url}/checkout/shopify/${SHOPIFY_SHOP_ID}/rates`,
    });
    const second = await registerCarrierService(shop, { request, publicUrl: stack.web.url });
    expect(second).toMatchObject({ status: 'present', id: first.status === 'created' ? first.id : '' });
    const creations = shopify.graphqlCalls().filter((c) => c.rootFields.includes('carrierServiceCreate'));
    expect(creations).toHaveLength(1);
  });

  it('lets Shopify price a Dakar checkout through the registered callback', async () => {
    const published = JSON.parse(
      readFileSync(new URL('../fixtures/shopify/carrier-service-request.json', import.meta.url), 'utf8'),
    ) as {
      rate: { destination: Record<string, unknown>; items: Record<string, unknown>[]; currency: string };
    };
    published.rate.currency = 'XOF';
    published.rate.destination = {
      ...published.rate.destination,
      country: 'SN',
      postal_code: null,
      province: 'Dakar',
      city: 'Dakar',
      address1: 'Villa 5, Almadies',
    };
    published.rate.items = [{ ...published.rate.items[0], grams: 1000, quantity: 2 }];
    const answer = await shopify.requestShippingRates(SHOPIFY_DOMAIN, published);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      rates: [{ service_code: 'RELAIS_STANDARD', total_price: '280000', currency: 'XOF' }],
    });
  });

  it('points the existing service at a new public URL instead of failing on a duplicate name', async () => {
    const moved = await registerCarrierService(shop, { request, publicUrl: 'https://relais.example.com/base/' });
    expect(moved).toMatchObject({
      status: 'updated',
      callbackUrl: `https://relais.example.com/base/checkout/shopify/${SHOPIFY_SHOP_ID}/rates`,
      previousCallbackUrl: carrierServiceCallbackUrl(shop, stack.web.url),
    });
  });

  it('reports a service the merchant turned off, without turning it back on', async () => {
    const present = await registerCarrierService(shop, { request, publicUrl: 'https://relais.example.com/base/' });
    if (present.status !== 'present') throw new Error(`expected present, got ${present.status}`);
    await request(CARRIER_SERVICE_UPDATE_MUTATION, { input: { id: present.id, active: false } });
    const outcome = await registerCarrierService(shop, { request, publicUrl: 'https://relais.example.com/base/' });
    expect(outcome).toMatchObject({ status: 'inactive', id: present.id });
    const activations = shopify
      .graphqlCalls()
      .filter(
        (c) => c.rootFields.includes('carrierServiceUpdate') && JSON.stringify(c.variables).includes('"active":true'),
      );
    expect(activations).toHaveLength(0);
  });

  it("reports the Admin API's refusal instead of throwing", async () => {
    const refusing: AdminGraphqlRequest = async (query, variables) =>
      query === CARRIER_SERVICES_QUERY
        ? request(query, variables)
        : {
            data: {
              carrierServiceCreate: {
                carrierService: null,
                userErrors: [
                  {
                    field: ['input'],
                    message: 'Carrier service is not allowed on this plan',
                    code: 'CARRIER_SERVICE_CREATE_FAILED',
                  },
                ],
              },
            },
          };
    const other = {
      ...shop,
      id: 'dakar-other',
      policy: { ...shop.policy, checkoutRates: { ...shop.policy.checkoutRates, serviceName: 'Relais bis' } },
    };
    const outcome = await registerCarrierService(other, { request: refusing, publicUrl: stack.web.url });
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(outcome.status === 'failed' && outcome.message).toContain('not allowed on this plan');
  });
});
