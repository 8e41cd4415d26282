/**
 * A connected shop's settings, as the Connect page edits them (issue 17): the Shopify install or the WooCommerce
 * authorisation saved the shop switched off with its platform part only; the merchant fills in the rest here
 * (pickup, COD gateways, policy, the dispatch service's key and profile), and switches it on once `relais doctor`'s
 * checks pass for it.
 *
 * The form is validated exactly as the registry file is (buildShopRegistry, the same schema and messages), on the
 * whole document it would save. Secrets typed in the form are sealed in the shop-secret store and referenced as
 * `{ "stored": name }`; a secret field left empty keeps the stored value, and none is ever put back in a page.
 */
import type { MapLearnStatus } from '../../ops/map-learn-runs.js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { buildConnectedShop, revealedSecretsOf, type ConnectedShop } from '../../shops/shop-directory.js';
import { ShopRegistryError, type ShopConfig } from '../../shops/shops.js';
import type { ShopConnectionsPort } from '../ports.js';

export const COUNTRIES = ['SN', 'CI', 'TG', 'BJ', 'ML', 'BF', 'NE', 'GW'] as const;

/** What the settings form shows and posts; `dispatchApiKey` is write-only (empty: keep the stored key). */
export interface ShopSettingsForm {
  name: string;
  country: string;
  pickupNeighbourhood: string;
  pickupAddress: string;
  pickupContactName: string;
  pickupContactPhone: string;
  /** One gateway name per line. */
  codGateways: string;
  dispatchCashOnDeliveryAt: string;
  dispatchBaseUrl: string;
  dispatchTrackingUrl: string;
  dispatchProfile: string;
  dispatchApiKey: string;
}

export interface ShopSettingsView {
  shop: ConnectedShop;
  form: ShopSettingsForm;
  /** Whether a dispatch API key is stored (the form never shows it). */
  hasApiKey: boolean;
  /** The service map learned after "Check and switch on": how far it went. */
  serviceMap?: MapLearnStatus;
}

const API_KEY = 'dispatch.apiKey';
const WEBHOOK_TOKEN = 'dispatch.webhookToken';

const text = z.string().trim().max(2_000).catch('');
const formSchema = z.object({
  name: text,
  country: text,
  pickupNeighbourhood: text,
  pickupAddress: text,
  pickupContactName: text,
  pickupContactPhone: text,
  codGateways: text,
  dispatchCashOnDeliveryAt: text,
  dispatchBaseUrl: text,
  dispatchTrackingUrl: text,
  dispatchProfile: text,
  dispatchApiKey: text,
});

/** The posted form, every field a trimmed string (missing ones empty). */
export function readSettingsForm(body: unknown): ShopSettingsForm {
  return formSchema.parse(typeof body === 'object' && body !== null ? body : {});
}

const get = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined),
    value,
  );
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export async function shopSettings(port: ShopConnectionsPort, id: string): Promise<ShopSettingsView | undefined> {
  const shop = (await port.directory.list()).find((s) => s.id === id);
  if (!shop) return undefined;
  const doc = shop.document;
  const gateways = get(doc, 'policy', 'codGateways');
  const serviceMap = await port.mapStatus?.(id);
  return {
    shop,
    ...(serviceMap ? { serviceMap } : {}),
    hasApiKey: (await port.secrets.get(id, API_KEY)) !== undefined,
    form: {
      name: str(doc.name),
      country: str(doc.country),
      pickupNeighbourhood: str(get(doc, 'pickup', 'neighbourhood')),
      pickupAddress: str(get(doc, 'pickup', 'address')),
      pickupContactName: str(get(doc, 'pickup', 'contactName')),
      pickupContactPhone: str(get(doc, 'pickup', 'contactPhone')),
      codGateways: Array.isArray(gateways) ? gateways.filter((g) => typeof g === 'string').join('\n') : '',
      dispatchCashOnDeliveryAt: str(get(doc, 'policy', 'dispatchCashOnDeliveryAt')) || 'created',
      dispatchBaseUrl: str(get(doc, 'dispatch', 'baseUrl')),
      dispatchTrackingUrl: str(get(doc, 'dispatch', 'trackingUrl')),
      dispatchProfile: str(get(doc, 'dispatch', 'profile')) || 'default',
      dispatchApiKey: '',
    },
  };
}

/** The document the form describes: the shop's own document with the form's fields set (empty ones left out). */
function documentWith(shop: ConnectedShop, form: ShopSettingsForm): Record<string, unknown> {
  const doc = structuredClone(shop.document);
  const section = (name: string): Record<string, unknown> => {
    const current = doc[name];
    const object = current && typeof current === 'object' && !Array.isArray(current) ? current : {};
    doc[name] = object;
    return object as Record<string, unknown>;
  };
  const set = (target: Record<string, unknown>, key: string, value: string) => {
    if (value === '') delete target[key];
    else target[key] = value;
  };
  set(doc, 'name', form.name);
  set(doc, 'country', form.country.toUpperCase());
  const pickup = section('pickup');
  set(pickup, 'neighbourhood', form.pickupNeighbourhood);
  set(pickup, 'address', form.pickupAddress);
  set(pickup, 'contactName', form.pickupContactName);
  set(pickup, 'contactPhone', form.pickupContactPhone);
  const policy = section('policy');
  const gateways = form.codGateways
    .split(/\r?\n/)
    .map((g) => g.trim())
    .filter((g) => g !== '');
  if (gateways.length > 0) policy.codGateways = gateways;
  else delete policy.codGateways;
  set(policy, 'dispatchCashOnDeliveryAt', form.dispatchCashOnDeliveryAt);
  const dispatch = section('dispatch');
  set(dispatch, 'baseUrl', form.dispatchBaseUrl);
  set(dispatch, 'trackingUrl', form.dispatchTrackingUrl);
  set(dispatch, 'profile', form.dispatchProfile);
  dispatch.apiKey = { stored: API_KEY };
  dispatch.webhookToken = { stored: WEBHOOK_TOKEN };
  return doc;
}

/** Registry problems without the one-shop document's `shops.0.` prefix: the field as the form knows it. */
const problemsOf = (error: ShopRegistryError) =>
  error.problems.map((p) => p.replace(/^shops\.0\./, '').replace(/^shop [a-z0-9-]+: /, ''));

export type SaveSettingsOutcome =
  { kind: 'saved'; shop: ConnectedShop } | { kind: 'not_found' } | { kind: 'invalid'; problems: string[] };

/**
 * Saves the settings when the whole shop is valid; nothing is saved otherwise. The shop's delivery-webhook token is
 * made here the first time (the merchant never types it: the doctor check and the page show where it goes).
 */
export async function saveShopSettings(
  port: ShopConnectionsPort,
  id: string,
  form: ShopSettingsForm,
): Promise<SaveSettingsOutcome> {
  const shop = (await port.directory.list()).find((s) => s.id === id);
  if (!shop) return { kind: 'not_found' };
  const secrets = await revealedSecretsOf(port.secrets, id);
  const fresh = new Map<string, string>();
  if (form.dispatchApiKey !== '') fresh.set(API_KEY, form.dispatchApiKey);
  if (!secrets.has(WEBHOOK_TOKEN)) fresh.set(WEBHOOK_TOKEN, randomBytes(32).toString('base64url'));
  const document = documentWith(shop, form);
  try {
    buildConnectedShop(document, new Map([...secrets, ...fresh]));
  } catch (error) {
    if (error instanceof ShopRegistryError) return { kind: 'invalid', problems: problemsOf(error) };
    throw error;
  }
  for (const [name, value] of fresh) await port.secrets.put(id, name, value);
  const saved = { id, platform: shop.platform, document, enabled: shop.enabled };
  await port.directory.save(saved);
  if (shop.enabled) await port.announce();
  return { kind: 'saved', shop: saved };
}

export type SwitchOnOutcome =
  | { kind: 'on' }
  | { kind: 'not_found' }
  | { kind: 'invalid'; problems: string[] }
  | { kind: 'checks_failed'; failures: { name: string; detail: string; fix?: string }[] };

/** Switches the shop on once its settings are complete and every check `relais doctor` makes of it passes. */
export async function switchShopOn(port: ShopConnectionsPort, id: string): Promise<SwitchOnOutcome> {
  const shop = (await port.directory.list()).find((s) => s.id === id);
  if (!shop) return { kind: 'not_found' };
  let config: ShopConfig;
  try {
    config = buildConnectedShop(shop.document, await revealedSecretsOf(port.secrets, id));
  } catch (error) {
    if (error instanceof ShopRegistryError) return { kind: 'invalid', problems: problemsOf(error) };
    throw error;
  }
  const failures = (await port.check(config))
    .filter((result) => result.status === 'error')
    .map((result) => ({ name: result.name, detail: result.detail, ...(result.fix ? { fix: result.fix } : {}) }));
  if (failures.length > 0) return { kind: 'checks_failed', failures };
  await port.directory.setEnabled(id, true);
  await port.announce();
  port.learnMap?.(config); // in the background: the shop is served meanwhile, its first orders learn as they go
  return { kind: 'on' };
}

/** Stops serving the shop (its settings and secrets stay, to switch it on again). */
export async function switchShopOff(port: ShopConnectionsPort, id: string): Promise<boolean> {
  const changed = await port.directory.setEnabled(id, false);
  if (changed) await port.announce();
  return changed;
}
