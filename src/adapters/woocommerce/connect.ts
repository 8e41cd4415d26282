/**
 * Connecting a merchant's WooCommerce store through its app authorisation (issue 17, item 2), shaped like the
 * Shopify install (../shopify/oauth.ts):
 *
 *  begin(storeUrl, shopId, binding)  a random user_id (32 bytes), kept in Redis for 10 minutes with the store URL,
 *                       the Relais shop id and the Connect page's browser session; answers the store's
 *                       `/wc-auth/v1/authorize` URL with Relais's callback_url and return_url.
 *  callback(body)       what the store POSTs once the merchant approved. Refused (nothing stored) when the user_id
 *                       is unknown, expired or already used, the keys are not read_write, or the store refuses
 *                       them (a REST call to the store URL begun with, not to any URL the body could name), or
 *                       the shop id names another shop (another platform's, or another WooCommerce store). Then
 *                       the keys are sealed in the shop-secret store, the shop saved in the directory (switched
 *                       off until the Connect page's settings are filled in), and Relais's order webhooks
 *                       registered on the store with a webhook secret sealed beside the keys.
 *  finish(userId, success, binding)  what the return page says: connected, denied, or why not.
 *
 * The callback comes from the store's server, not the merchant's browser, so it carries no session: the user_id is
 * the capability, single-use and short-lived, and the keys must work on the store the operator named. The session
 * binding is checked where a browser comes back (finish): a page begun in another session shows nothing about it
 * and cannot cancel it.
 *
 * WooCommerce posts keys only to an https callback_url; RELAIS_PUBLIC_URL may be http only on a loopback host, where
 * the emulator (packages/emulators/src/woocommerce) plays the store. Secrets are never logged nor put in an outcome.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { ShopDirectory } from '../../shops/shop-directory.js';
import type { ShopSecretStore } from '../../shops/shop-secrets.js';
import { Secret } from '../../shops/secret.js';
import type { Logger } from '../../log.js';
import { messageOf, publicEndpoint } from '../../domain/checks.js';
import type { ConnectOutcome, ConnectStates } from './connect-states.js';
import { createWooOperatorRest } from './rest.js';
import { type WooOperatorRest } from './rest-types.js';
import { registerWooWebhooks } from './connect-webhooks.js';
import { RefusalError } from '../../domain/errors.js';

export const WOO_CONNECT_CALLBACK_PATH = '/connect/woocommerce/callback';
export const WOO_CONNECT_RETURN_PATH = '/connect/woocommerce/return';
/** Where the keys and the webhook secret are sealed, named after where they sit in the shop's registry entry. */
export const WOO_STORED = {
  consumerKey: 'woocommerce.consumerKey',
  consumerSecret: 'woocommerce.consumerSecret',
  webhookSecret: 'woocommerce.webhookSecret',
} as const;

const DEFAULT_STATE_TTL_MS = 10 * 60_000;
const USER_ID = /^[0-9a-f]{64}$/;
const LOOPBACK = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/i;

export type WooConnectRefusal =
  'invalid_store_url' | 'shop_id_taken' | 'malformed' | 'unknown_state' | 'insufficient_permissions' | 'keys_rejected';

/** A connection Relais refuses or the shop refuses: the same request gets the same answer. */
export class WooConnectError extends RefusalError<WooConnectRefusal> {
  override readonly name = 'WooConnectError';
}

export interface WooConnectOptions {
  /** RELAIS_PUBLIC_URL: callback_url and return_url are under it, and the webhooks' delivery URL. */
  publicUrl: string;
  /** Shown by WooCommerce on its approval page. */
  appName?: string;
  states: ConnectStates;
  secrets: ShopSecretStore;
  directory: ShopDirectory;
  logger: Logger;
  /** Tells every process the served shops changed (a shop connected again while switched on). */
  announce?: () => Promise<void>;
  stateTtlMs?: number;
}

export type WooReturn =
  | { kind: 'connected'; shopId: string; message: string }
  | { kind: 'failed'; shopId: string; message: string }
  | { kind: 'denied'; shopId?: string }
  | { kind: 'keys_not_received'; shopId: string }
  | { kind: 'other_session' }
  | { kind: 'unknown' };

const callbackBody = z.object({
  key_id: z.union([z.number(), z.string()]).optional(),
  user_id: z.union([z.string(), z.number()]).transform(String),
  consumer_key: z.string().regex(/^ck_\w{8,}$/),
  consumer_secret: z.string().regex(/^cs_\w{8,}$/),
  key_permissions: z.string(),
});

/** A store URL as the merchant types it, made the site's base URL (no query, no trailing slash). */
function storeBase(storeUrl: string): string | undefined {
  const text = storeUrl.trim();
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  if (!/^https?:$/.test(url.protocol) || url.username !== '' || url.password !== '') return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export class WooConnect {
  readonly #options: WooConnectOptions;
  readonly #ttlMs: number;

  constructor(options: WooConnectOptions) {
    const url = new URL(options.publicUrl);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname)))
      throw new Error(
        `RELAIS_PUBLIC_URL (${options.publicUrl}) must be https: WooCommerce posts a store's keys only to an https callback (http is accepted on a loopback host, for the emulators)`,
      );
    this.#options = options;
    this.#ttlMs = options.stateTtlMs ?? DEFAULT_STATE_TTL_MS;
  }

  get callbackUrl(): string {
    return publicEndpoint(this.#options.publicUrl, WOO_CONNECT_CALLBACK_PATH);
  }
  get returnUrl(): string {
    return publicEndpoint(this.#options.publicUrl, WOO_CONNECT_RETURN_PATH);
  }

  /** The store's authorize URL for the merchant's browser, and the user_id it carries. */
  async begin(input: { storeUrl: string; shopId: string; binding?: string }): Promise<{ url: string; userId: string }> {
    const storeUrl = storeBase(input.storeUrl);
    if (storeUrl === undefined)
      throw this.#refuse('invalid_store_url', `"${input.storeUrl.slice(0, 200)}" is not a store URL (https://…)`);
    await this.#ownShopId(input.shopId, storeUrl);
    const userId = randomBytes(32).toString('hex');
    await this.#options.states.putPending(
      userId,
      { storeUrl, shopId: input.shopId, binding: input.binding ?? null },
      this.#ttlMs,
    );
    const query = new URLSearchParams({
      app_name: this.#options.appName ?? 'Relais',
      scope: 'read_write',
      user_id: userId,
      return_url: this.returnUrl,
      callback_url: this.callbackUrl,
    });
    this.#options.logger.info({ shopId: input.shopId, storeUrl }, 'WooCommerce connection begun');
    return { url: `${storeUrl}/wc-auth/v1/authorize?${query.toString()}`, userId };
  }

  /** The store's POST with the keys. Throws WooConnectError when refused; nothing is stored then. */
  async callback(body: unknown): Promise<{ shopId: string; webhooks: string }> {
    const parsed = callbackBody.safeParse(body);
    if (!parsed.success)
      throw this.#refuse('malformed', 'the callback is not WooCommerce’s {key_id, user_id, consumer_key, …}');
    const keys = parsed.data;
    const pending = USER_ID.test(keys.user_id) ? await this.#options.states.takePending(keys.user_id) : undefined;
    if (pending === undefined)
      throw this.#refuse(
        'unknown_state',
        'the callback carries a user_id Relais did not issue, or one already used or expired: connect the store again',
      );
    const fail = async (reason: WooConnectRefusal, message: string) => {
      await this.#record(keys.user_id, { ...pending, connected: false, message });
      return this.#refuse(reason, message, pending.shopId);
    };
    if (keys.key_permissions !== 'read_write')
      throw await fail(
        'insufficient_permissions',
        `the store granted ${keys.key_permissions.slice(0, 20)} access; Relais needs Read/Write (it writes orders back and registers webhooks)`,
      );
    const consumerKey = new Secret(keys.consumer_key, 'WooCommerce app authorisation');
    const consumerSecret = new Secret(keys.consumer_secret, 'WooCommerce app authorisation');
    const rest = this.#restFor(pending.storeUrl, consumerKey, consumerSecret);
    try {
      await rest.getSetting('general', 'woocommerce_currency');
    } catch (error) {
      throw await fail('keys_rejected', `${pending.storeUrl} did not accept the keys it sent (${messageOf(error)})`);
    }
    try {
      await this.#ownShopId(pending.shopId, pending.storeUrl);
    } catch (error) {
      throw await fail('shop_id_taken', messageOf(error));
    }

    const { shopId } = pending;
    const stored = await this.#options.secrets.get(shopId, WOO_STORED.webhookSecret);
    // Connected again: the same webhook secret, so processes serving the shop keep verifying its deliveries.
    const webhookSecret = stored?.value.reveal() ?? randomBytes(32).toString('base64url');
    await this.#options.secrets.put(shopId, WOO_STORED.consumerKey, keys.consumer_key);
    await this.#options.secrets.put(shopId, WOO_STORED.consumerSecret, keys.consumer_secret);
    await this.#options.secrets.put(shopId, WOO_STORED.webhookSecret, webhookSecret);
    const enabled = await this.#saveShop(shopId, pending.storeUrl);
    const webhooks = await registerWooWebhooks(rest, { shopId, publicUrl: this.#options.publicUrl, webhookSecret });
    const message = `keys received, checked on ${pending.storeUrl} and stored encrypted; ${webhooks}`;
    await this.#record(keys.user_id, { ...pending, connected: true, message });
    this.#options.logger.info(
      { shopId, storeUrl: pending.storeUrl, enabled },
      `WooCommerce store connected: ${webhooks}`,
    );
    if (enabled) await this.#options.announce?.();
    return { shopId, webhooks };
  }

  /** What the browser's return (`success`, `user_id`) means; a denial cancels the connection. */
  async finish(input: { userId: string; success: boolean; binding?: string }): Promise<WooReturn> {
    if (!USER_ID.test(input.userId)) return { kind: 'unknown' };
    const states = this.#options.states;
    const foreign = (bound: string | null) => bound !== null && input.binding !== undefined && bound !== input.binding;
    const outcome = await states.outcome(input.userId);
    if (outcome) {
      if (foreign(outcome.binding)) return { kind: 'other_session' };
      return { kind: outcome.connected ? 'connected' : 'failed', shopId: outcome.shopId, message: outcome.message };
    }
    const pending = await states.peekPending(input.userId);
    if (!pending) return input.success ? { kind: 'unknown' } : { kind: 'denied' };
    if (foreign(pending.binding)) return { kind: 'other_session' };
    if (input.success) return { kind: 'keys_not_received', shopId: pending.shopId };
    // Denied: the user_id is spent, so no callback can use it later.
    await states.takePending(input.userId);
    this.#options.logger.info({ shopId: pending.shopId }, 'WooCommerce connection denied by the merchant');
    return { kind: 'denied', shopId: pending.shopId };
  }

  #restFor = (storeUrl: string, consumerKey: Secret, consumerSecret: Secret): WooOperatorRest =>
    createWooOperatorRest({
      url: storeUrl,
      consumerKey,
      consumerSecret,
      timeoutMs: 10_000,
      logger: this.#options.logger,
    });

  /**
   * A shop id is taken over only by the store it already names: another platform's shop, or another WooCommerce
   * store, keeps it (the keys and the directory entry are saved under the id, so connecting another store under
   * it would silently turn the live shop's orders, keys and webhooks to that store). The same store connected
   * again is allowed: that is how its keys are renewed.
   */
  async #ownShopId(shopId: string, storeUrl: string): Promise<void> {
    const existing = (await this.#options.directory.list()).find((shop) => shop.id === shopId);
    if (!existing) return;
    if (existing.platform !== 'woocommerce')
      throw this.#refuse('shop_id_taken', `shop id ${shopId} is a connected ${existing.platform} shop: choose another`);
    const part = existing.document.woocommerce as { url?: unknown } | undefined;
    const connectedTo = typeof part?.url === 'string' ? storeBase(part.url) : undefined;
    if (connectedTo !== undefined && connectedTo !== storeUrl)
      throw this.#refuse(
        'shop_id_taken',
        `shop id ${shopId} is connected to ${connectedTo}: connecting ${storeUrl} under it would replace that shop's store, keys and webhooks; choose another shop id (connecting ${connectedTo} again renews its keys)`,
      );
  }

  /** A new shop is saved switched off, with its WooCommerce part only; a known one keeps its settings and state. */
  async #saveShop(shopId: string, storeUrl: string): Promise<boolean> {
    const existing = (await this.#options.directory.list()).find((shop) => shop.id === shopId);
    const previous = (existing?.document.woocommerce ?? {}) as Record<string, unknown>;
    const document = {
      ...(existing?.document ?? {}),
      id: shopId,
      platform: 'woocommerce',
      woocommerce: {
        ...previous,
        url: storeUrl,
        consumerKey: { stored: WOO_STORED.consumerKey },
        consumerSecret: { stored: WOO_STORED.consumerSecret },
        webhookSecret: { stored: WOO_STORED.webhookSecret },
      },
    };
    const enabled = existing?.enabled ?? false;
    await this.#options.directory.save({ id: shopId, platform: 'woocommerce', document, enabled });
    return enabled;
  }

  async #record(userId: string, outcome: ConnectOutcome): Promise<void> {
    await this.#options.states.putOutcome(userId, outcome, this.#ttlMs);
  }

  #refuse(reason: WooConnectRefusal, message: string, shopId?: string): WooConnectError {
    this.#options.logger.warn({ reason, ...(shopId ? { shopId } : {}) }, `WooCommerce connection refused: ${message}`);
    return new WooConnectError(reason, message);
  }
}
