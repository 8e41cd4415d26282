/**
 * The Connect page's routes, under /dashboard/shops (authenticated, CSRF-checked like every dashboard action):
 * the list, the two ways to connect a shop, a connected shop's settings, and switching it on or off.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { SHOP_ID_PATTERN } from '../domain/ids.js';
import type { Viewer } from './middleware/auth.js';
import { form } from './middleware/forms.js';
import type { DashboardDeps, ShopConnectionsPort } from './ports.js';
import type { Responses } from './responses.js';
import { shopSettingsHref } from './links.js';
import { continueBody, shopsBody, shopSettingsBody } from './shop-pages.js';
import { notFoundBody } from './pages.js';
import {
  readSettingsForm,
  saveShopSettings,
  shopSettings,
  switchShopOff,
  switchShopOn,
} from './use-cases/shop-settings.js';

const NO_SECRET_KEYS =
  'Connecting shops needs RELAIS_SECRET_KEYS: their tokens and keys are kept encrypted in the database, under that key. Make one with: echo "k1:$(openssl rand -base64 32)"';

const SHOPIFY_DOMAIN = /^[a-z0-9][a-z0-9-]*\.myshopify\.com$/;

type Tools = Responses & { csrf: RequestHandler; viewerOf(req: Request): Viewer };

/**
 * The registry file's shops: those served that the directory does not hold. Taken per request: the served
 * registry is live (connected shops join it when switched on), so a list taken at start would go stale and would
 * count a connected shop as a file shop (refusing to connect it again).
 */
function fileShopsBeside(deps: DashboardDeps, connected: readonly { id: string }[]) {
  return deps.shops
    .all()
    .filter((s) => !connected.some((c) => c.id === s.id))
    .map((s) => ({ id: s.id, name: s.name, platform: s.platform }));
}

function text(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** A connection's start: the shop id and the browser session the install is bound to (only it can finish). */
interface Begin {
  port: ShopConnectionsPort;
  shopId: string;
  binding: string;
}

const BACK = '/dashboard/shops';

async function beginShopify(tools: Tools, req: Request, res: Response, begin: Begin): Promise<void> {
  const domain = text(req, 'domain').toLowerCase();
  if (!SHOPIFY_DOMAIN.test(domain)) {
    tools.redirectWithFlash(req, res, BACK, {
      kind: 'error',
      message: `"${domain}" is not a shop's myshopify.com domain.`,
    });
    return;
  }
  const url = await begin.port.beginShopify!({ domain, shopId: begin.shopId, binding: begin.binding });
  tools.send(
    req,
    res,
    { section: 'shops', title: 'Approve on Shopify', refreshUrl: url },
    continueBody('Shopify', url),
  );
}

async function beginWooCommerce(tools: Tools, req: Request, res: Response, begin: Begin): Promise<void> {
  const storeUrl = text(req, 'storeUrl');
  if (!URL.canParse(storeUrl) || !/^https?:$/.test(new URL(storeUrl).protocol)) {
    tools.redirectWithFlash(req, res, BACK, { kind: 'error', message: `"${storeUrl}" is not a store URL.` });
    return;
  }
  const begun = await begin.port.beginWooCommerce!({ storeUrl, shopId: begin.shopId, binding: begin.binding });
  if ('refused' in begun) {
    tools.redirectWithFlash(req, res, BACK, { kind: 'error', message: begun.refused });
    return;
  }
  const { url } = begun;
  tools.send(
    req,
    res,
    { section: 'shops', title: 'Approve on WooCommerce', refreshUrl: url },
    continueBody('WooCommerce', url),
  );
}

/** POST /connect/:platform: checks the shop id, then hands the browser to the platform to approve the app. */
function connectShop(deps: DashboardDeps, tools: Tools): RequestHandler {
  const port = deps.connections;
  return async (req, res) => {
    const shopId = text(req, 'shopId');
    const viewer = tools.viewerOf(req);
    const binding = viewer.kind === 'session' ? viewer.session.id : undefined;
    if (!port || binding === undefined) {
      tools.redirectWithFlash(req, res, BACK, {
        kind: 'error',
        message: port ? 'Log in with the form to connect a shop.' : NO_SECRET_KEYS,
      });
      return;
    }
    if (
      !SHOP_ID_PATTERN.test(shopId) ||
      fileShopsBeside(deps, await port.directory.list()).some((s) => s.id === shopId)
    ) {
      tools.redirectWithFlash(req, res, BACK, {
        kind: 'error',
        message: `Shop id "${shopId}": use lowercase letters, digits and hyphens, and an id no registry-file shop has.`,
      });
      return;
    }
    if (req.params.platform === 'shopify' && port.beginShopify)
      return beginShopify(tools, req, res, { port, shopId, binding });
    if (req.params.platform === 'woocommerce' && port.beginWooCommerce)
      return beginWooCommerce(tools, req, res, { port, shopId, binding });
    tools.redirectWithFlash(req, res, BACK, {
      kind: 'error',
      message: 'This way of connecting a shop is not configured.',
    });
  };
}

/** A connected shop's settings page and form, and switching it on or off. */
function shopSettingsRoutes(deps: DashboardDeps, tools: Tools): Router {
  const router = Router();
  const { send, redirectWithFlash, csrfOf, csrf } = tools;
  const port = deps.connections;

  router.get('/:id', async (req, res) => {
    const view = port ? await shopSettings(port, String(req.params.id)) : undefined;
    if (!view) {
      send(req, res, { section: 'shops', title: 'Not found' }, notFoundBody('No connected shop with this id.'), 404);
      return;
    }
    send(
      req,
      res,
      { section: 'shops', title: view.form.name || view.shop.id },
      shopSettingsBody({ ...view, csrf: csrfOf(req) }),
    );
  });

  router.post('/:id', form, csrf, async (req, res) => {
    const id = String(req.params.id);
    const settings = readSettingsForm(req.body);
    const outcome = port ? await saveShopSettings(port, id, settings) : { kind: 'not_found' as const };
    if (outcome.kind === 'not_found') {
      redirectWithFlash(req, res, BACK, { kind: 'error', message: `No connected shop ${id}.` });
      return;
    }
    if (outcome.kind === 'invalid') {
      const view = await shopSettings(port!, id);
      send(
        req,
        res,
        { section: 'shops', title: 'Settings not saved' },
        shopSettingsBody({
          ...view!,
          form: { ...settings, dispatchApiKey: '' },
          problems: outcome.problems,
          csrf: csrfOf(req),
        }),
        422,
      );
      return;
    }
    deps.logger.info({ shop: id }, 'dashboard: shop settings saved');
    redirectWithFlash(req, res, shopSettingsHref(id), { kind: 'ok', message: 'Settings saved.' });
  });

  router.post('/:id/on', form, csrf, switchOnHandler(deps, tools));

  router.post('/:id/off', form, csrf, async (req, res) => {
    const id = String(req.params.id);
    const changed = port ? await switchShopOff(port, id) : false;
    deps.logger.info({ shop: id, changed }, 'dashboard: shop switched off');
    redirectWithFlash(req, res, shopSettingsHref(id), {
      kind: changed ? 'ok' : 'error',
      message: changed ? 'Switched off: new orders of this shop are no longer dispatched.' : `No connected shop ${id}.`,
    });
  });

  return router;
}

/** POST /:id/on: the doctor's checks first; the shop is switched on only when they pass, else the page says why. */
function switchOnHandler(deps: DashboardDeps, { redirectWithFlash }: Tools): RequestHandler {
  const port = deps.connections;
  return async (req, res) => {
    const id = String(req.params.id);
    const outcome = port ? await switchShopOn(port, id) : { kind: 'not_found' as const };
    const to = shopSettingsHref(id);
    switch (outcome.kind) {
      case 'not_found':
        redirectWithFlash(req, res, BACK, { kind: 'error', message: `No connected shop ${id}.` });
        return;
      case 'invalid':
        redirectWithFlash(req, res, to, {
          kind: 'error',
          message: `Not switched on: the settings are incomplete (${outcome.problems.join('; ')}).`,
        });
        return;
      case 'checks_failed':
        redirectWithFlash(req, res, to, {
          kind: 'error',
          message: `Not switched on: ${outcome.failures.map((f) => `${f.name}: ${f.detail}${f.fix ? ` (${f.fix})` : ''}`).join('; ')}.`,
        });
        return;
      case 'on':
        deps.logger.info({ shop: id }, 'dashboard: shop switched on');
        redirectWithFlash(req, res, to, {
          kind: 'ok',
          message: "Checks passed: Relais now dispatches this shop's orders.",
        });
    }
  };
}

export function shopRoutes(deps: DashboardDeps, tools: Tools): Router {
  const router = Router();
  const port = deps.connections;

  router.get('/', async (req, res) => {
    const connected = port ? await port.directory.list() : undefined;
    tools.send(
      req,
      res,
      { section: 'shops', title: 'Shops' },
      shopsBody({
        fileShops: fileShopsBeside(deps, connected ?? []),
        connected,
        ...(port ? {} : { unavailable: NO_SECRET_KEYS }),
        shopifyConfigured: port?.beginShopify !== undefined,
        wooConfigured: port?.beginWooCommerce !== undefined,
        csrf: tools.csrfOf(req),
      }),
    );
  });
  router.post('/connect/:platform', form, tools.csrf, connectShop(deps, tools));
  router.use(shopSettingsRoutes(deps, tools));

  return router;
}
