/**
 * shopify.app.toml, the Shopify CLI's app configuration at the repository's root, kept in step with the code: its
 * scopes are exactly those the Admin API documents Relais sends need (every field walked against the real Admin
 * schema 2026-10 and looked up in src/adapters/shopify/scopes.ts), its webhook topics are the ones Relais handles,
 * delivered to Relais's Shopify webhook path, and its install URLs are the install routes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parse as parseToml } from 'toml';
import { parse, TypeInfo, visit, visitWithTypeInfo, getNamedType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadAdminSchema } from '@relais/emulators/shopify';
import { ADMIN_DOCUMENTS } from '../../src/adapters/shopify/admin-documents.js';
import {
  CARRIER_SERVICE_CREATE_MUTATION,
  CARRIER_SERVICE_UPDATE_MUTATION,
  CARRIER_SERVICES_QUERY,
} from '../../src/adapters/shopify/carrier-service.js';
import { SHOPIFY_CALLBACK_PATH, SHOPIFY_INSTALL_PATH } from '../../src/adapters/shopify/connect.js';
import { DOCTOR_SHOPIFY_DOCUMENTS } from '../../src/adapters/shopify/doctor.js';
import { ORDER_LIST_DOCUMENTS } from '../../src/adapters/shopify/orders.js';
import { scopeCovers, SHOPIFY_FIELD_SCOPES, shopifyAccessScopes } from '../../src/adapters/shopify/scopes.js';
import { shopifySettingsSchema } from '../../src/adapters/shopify/settings-schema.js';
import {
  SHOPIFY_COMPLIANCE_TOPICS,
  SHOPIFY_ORDER_TOPICS,
  shopifyWebhooks,
} from '../../src/adapters/shopify/webhooks.js';

interface AppToml {
  client_id: string;
  name: string;
  application_url: string;
  embedded: boolean;
  access_scopes: { scopes: string; use_legacy_install_flow: boolean };
  auth: { redirect_urls: string[] };
  webhooks: { api_version: string; subscriptions: { topics?: string[]; compliance_topics?: string[]; uri: string }[] };
}

const app = parseToml(readFileSync(new URL('../../shopify.app.toml', import.meta.url), 'utf8')) as AppToml;
const origin = new URL(app.application_url).origin;

/** Every GraphQL document Relais sends to a shop's Admin API. */
const DOCUMENTS: string[] = [
  ...Object.values(ADMIN_DOCUMENTS),
  ...Object.values(ORDER_LIST_DOCUMENTS),
  ...Object.values(DOCTOR_SHOPIFY_DOCUMENTS),
  CARRIER_SERVICES_QUERY,
  CARRIER_SERVICE_CREATE_MUTATION,
  CARRIER_SERVICE_UPDATE_MUTATION,
];

/** Operation names in the sources of src/adapters/shopify: a document added there must be in DOCUMENTS too. */
function operationsInSources(): Set<string> {
  const folder = new URL('../../src/adapters/shopify/', import.meta.url);
  const names = new Set<string>();
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    for (const match of readFileSync(new URL(file, folder), 'utf8').matchAll(/`(?:query|mutation) (Relais\w+)/g))
      names.add(match[1]!);
  }
  return names;
}

describe('shopify.app.toml', () => {
  it("asks for exactly the scopes the fields of Relais's Admin API documents need, and knows the scope of every root field they use", async () => {
    const { schema } = await loadAdminSchema('2026-10');
    const operations = new Set<string>();
    const used = new Set<string>();
    const unknownRoots: string[] = [];
    const rootTypes = new Set([schema.getQueryType()!.name, schema.getMutationType()!.name]);
    for (const document of DOCUMENTS) {
      const typeInfo = new TypeInfo(schema);
      visit(
        parse(document),
        visitWithTypeInfo(typeInfo, {
          OperationDefinition(node) {
            if (node.name) operations.add(node.name.value);
          },
          Field(node) {
            const parent = typeInfo.getParentType();
            if (!parent || !typeInfo.getFieldDef()) return;
            const key = `${getNamedType(parent).name}.${node.name.value}`;
            if (key in SHOPIFY_FIELD_SCOPES) used.add(key);
            else if (rootTypes.has(parent.name)) unknownRoots.push(key);
          },
        }),
      );
    }
    expect(operations).toEqual(operationsInSources());
    expect(unknownRoots).toEqual([]);
    // No entry in the table for a field no document uses: the scopes asked for are what is needed, no more.
    expect([...used].sort()).toEqual(Object.keys(SHOPIFY_FIELD_SCOPES).sort());

    const declared = app.access_scopes.scopes.split(',').map((s) => s.trim());
    for (const key of used) {
      const scope = SHOPIFY_FIELD_SCOPES[key];
      if (scope) expect(scopeCovers(declared, scope), `${key} needs ${scope}`).toBe(true);
    }
    expect(declared.sort()).toEqual(shopifyAccessScopes());
  });

  it("subscribes Relais's Shopify webhook path to every order topic it acts on, app/uninstalled, and the three compliance topics, and to nothing else", () => {
    const uri = `${origin}${shopifyWebhooks.path}`;
    for (const subscription of app.webhooks.subscriptions) expect(subscription.uri).toBe(uri);
    const topics = app.webhooks.subscriptions.flatMap((s) => s.topics ?? []);
    // app/uninstalled stops work for the shop (issue 17, branch live-shops); every other topic is an order topic.
    expect(topics.sort()).toEqual([...SHOPIFY_ORDER_TOPICS, 'app/uninstalled'].sort());
    const compliance = app.webhooks.subscriptions.flatMap((s) => s.compliance_topics ?? []);
    expect(compliance.sort()).toEqual([...SHOPIFY_COMPLIANCE_TOPICS].sort());
    const defaults = shopifySettingsSchema.parse({
      domain: 'x.myshopify.com',
      accessToken: { env: 'T' },
      webhookSecret: { env: 'S' },
    });
    expect(app.webhooks.api_version).toBe(defaults.apiVersion);
  });

  it("installs through Relais's install route with Shopify's managed install, redirecting to its callback, not embedded, with a client id to fill in", () => {
    expect(new URL(app.application_url).pathname).toBe(SHOPIFY_INSTALL_PATH);
    expect(app.auth.redirect_urls).toEqual([`${origin}${SHOPIFY_CALLBACK_PATH}`]);
    expect(app.access_scopes.use_legacy_install_flow).toBe(false);
    expect(app.embedded).toBe(false);
    expect(app.name).toBe('Relais');
    expect(app.client_id).toBe('YOUR_CLIENT_ID');
  });
});
