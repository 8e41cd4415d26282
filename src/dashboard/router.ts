/**
 * The dashboard, mounted at /dashboard by createApp. Without a token it only says how to enable it.
 *
 * Request flow: security headers → Redis reachable (./middleware/availability.ts) → login (public) →
 * authentication, session cookie or bearer token (./middleware/auth.ts) → CSRF check on every
 * state-changing request (./middleware/csrf.ts) → pages, actions, bull-board.
 */
import { resolveDeliveryAddress } from '../geo/order-address.js';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { openDisputeInputSchema } from '../disputes/disputes.js';
import { unreadySince } from '../domain/shipment-status.js';
import type { OrderRecord, OrderState } from '../ledger/order-ledger.js';
import { clearCookie, DEFAULT_SESSION_TTL_MS, FLASH_COOKIE, LoginThrottle, readCookie, SessionSigner, setCookie, type Flash } from './auth.js';
import { codFigures, listOrders, loadRecords, SCAN_LIMIT } from './data.js';
import { formatTime } from './html.js';
import { dashboardAuth } from './middleware/auth.js';
import { answerOr503 } from './middleware/availability.js';
import { csrfCheck } from './middleware/csrf.js';
import { dashboardErrors } from './middleware/errors.js';
import { disputeForm, form } from './middleware/forms.js';
import { disabledPage, page, PAGE_CSP, QUEUES_CSP, securityHeaders, type PageContext } from './layout.js';
import {
  heldBody, moneyBody, notFoundBody, ORDER_STATES, orderDetailBody, orderHref, ordersBody, TRANSIENT_STATES, type OrderDisputesView, type ShopChoice,
} from './pages.js';
import type { DashboardDeps } from './ports.js';
import { queuesBoard, refuseWrites } from './queues.js';

const ORDERS_PAGE_SIZE = 100;
const HELD_PAGE_SIZE = 200;

const aliasForm = z.object({
  _csrf: z.string().optional(),
  text: z.string().trim().min(1, 'say what customers write').max(120),
  neighbourhood: z.string().trim().min(1, 'name the neighbourhood').max(120),
});

/** How the dispute form's fields are named in messages. */
const DISPUTE_FIELD_LABELS: Record<string, string> = { reason: 'reason', description: 'description', claimantId: 'claimant id', claimantType: 'claimant type' };

/** The dispute form, read with src/disputes' own schema; an emptied claimant type means the default (seller). */
function parseDisputeForm(body: unknown) {
  const fields = (body ?? {}) as Record<string, unknown>;
  const claimantType = typeof fields.claimantType === 'string' && fields.claimantType.trim() === '' ? undefined : fields.claimantType;
  return openDisputeInputSchema.safeParse({ reason: fields.reason, description: fields.description, claimantId: fields.claimantId, claimantType });
}

const sentence = (text: string) => text.trim().replace(/[.\s]+$/, '');

function pick<T>(schema: z.ZodType<T>, value: unknown, fallback: T): T {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : fallback;
}

export function dashboardRoutes(deps: DashboardDeps | undefined): Router {
  if (deps) return enabledDashboard(deps);
  // Never open: with no token configured there is nothing to log in with, so say how to enable it.
  return Router().use((_req, res) => {
    securityHeaders(res, PAGE_CSP);
    res.status(404).type('html').send(disabledPage());
  });
}

function enabledDashboard(deps: DashboardDeps): Router {
  const router = Router();
  const signer = new SessionSigner(deps.token);
  const nowMs = () => deps.now().getTime();
  const shopChoices: ShopChoice[] = deps.shops.all().map((s) => ({ id: s.id, name: s.name, platform: s.platform }));
  const shopName = (id: string) => deps.shops.get(id)?.name ?? id;

  router.use((req, res, next) => {
    securityHeaders(res, req.path === '/queues' || req.path.startsWith('/queues/') ? QUEUES_CSP : PAGE_CSP);
    next();
  });

  router.use(answerOr503({ redisConnected: deps.redisConnected, answerWithinMs: deps.answerWithinMs ?? 10_000 }));

  const auth = dashboardAuth({
    token: deps.token, signer, throttle: new LoginThrottle(), revocations: deps.revocations, sessionTtlMs: deps.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS, nowMs, logger: deps.logger,
  });
  const { viewerOf } = auth;
  const csrf = csrfCheck(signer, viewerOf);
  router.use(auth.login);
  router.use(auth.authenticate);
  router.post('/logout', form, csrf, auth.logout);

  // ------------------------------------------------------------------------------------- pages
  function takeFlash(req: Request, res: Response): Flash | undefined {
    const raw = readCookie(req, FLASH_COOKIE);
    if (raw === undefined) return undefined;
    clearCookie(req, res, FLASH_COOKIE);
    return signer.readFlash(raw, nowMs());
  }

  function redirectWithFlash(req: Request, res: Response, to: string, flash: Flash): void {
    // A cookie holds about 4 kB: a long resolver explanation is cut rather than silently dropped.
    const message = flash.message.length > 800 ? `${flash.message.slice(0, 799)}…` : flash.message;
    setCookie(req, res, FLASH_COOKIE, signer.flashCookie({ ...flash, message }, nowMs()), 60_000);
    res.redirect(303, to);
  }

  function send(req: Request, res: Response, ctx: Omit<PageContext, 'csrf' | 'flash'>, body: Parameters<typeof page>[1], status = 200): void {
    const viewer = viewerOf(req);
    res.status(status).type('html').send(page({ ...ctx, csrf: viewer.kind === 'session' ? viewer.csrf : undefined, flash: takeFlash(req, res) }, body));
  }

  const csrfOf = (req: Request): string | undefined => {
    const viewer = viewerOf(req);
    return viewer.kind === 'session' ? viewer.csrf : undefined;
  };

  /** Neighbourhoods the order's address comes closest to, as suggestions for an alias. */
  async function suggestionsFor(record: OrderRecord): Promise<string[]> {
    const shop = deps.shops.get(record.meta.shopId);
    const d = record.order?.dropoff;
    if (!shop || !d) return [];
    const resolution = resolveDeliveryAddress(deps.resolver, d, { country: shop.country, aliases: await deps.aliases.forShop(shop) });
    return resolution.ok ? [resolution.neighbourhood.name] : resolution.candidates.map((c) => c.name);
  }

  router.get('/', (_req, res) => {
    res.redirect(303, '/dashboard/orders');
  });

  const daysParam = (allowed: number[], fallback: number) => z.coerce.number().int().refine((d) => allowed.includes(d)).catch(fallback);

  router.get('/orders', async (req, res) => {
    const fallbackShop = shopChoices[0]?.id ?? '';
    const shopId = pick(z.string().refine((id) => deps.shops.get(id) !== undefined), req.query.shop, fallbackShop);
    const state = pick(z.enum(ORDER_STATES as [OrderState, ...OrderState[]]).optional(), req.query.state || undefined, undefined);
    const days = daysParam([1, 7, 30, 90], 30).parse(req.query.days ?? 30);
    const since = new Date(nowMs() - days * 86_400_000);
    const listing = shopId ? await listOrders(deps.ledger, { shopId, since, state, limit: ORDERS_PAGE_SIZE }) : { records: [], inWindow: 0, truncated: false };
    send(req, res, { section: 'orders', title: 'Orders' }, ordersBody({ shops: shopChoices, shopId, state, days, listing }));
  });

  /**
   * Whether the order page should reload itself: the order is between two steps of the pipeline, or a replay
   * was just queued and the worker has not taken it yet (still held, by the hold from before the replay).
   * `replayed` (the replay's time, from the redirect) only ever makes the page reload, for a minute at most.
   */
  function stillMoving(record: OrderRecord, replayed: unknown): boolean {
    if (TRANSIENT_STATES.has(record.state)) return true;
    const replayedAt = typeof replayed === 'string' && /^\d{1,15}$/.test(replayed) ? Number(replayed) : undefined;
    if (record.state !== 'held' || replayedAt === undefined || !record.hold || nowMs() - replayedAt > 60_000) return false;
    return Date.parse(record.hold.at) < replayedAt;
  }

  /**
   * The claims on the order's shipment. The delivery service is asked only when there is news to expect (a
   * claim still open) or the operator asks: each call goes on the order's timeline, which keeps the last 200
   * entries, so page views must not push the order's history out. Never while the page reloads itself.
   */
  async function disputesOf(record: OrderRecord, options: { reloading: boolean; ask: boolean }): Promise<OrderDisputesView> {
    const id = record.meta.externalOrderId;
    const recorded = await deps.disputes.lastSeen(id);
    const waiting = recorded.some((c) => c.status.toUpperCase() === 'OPEN');
    if (options.reloading || !(waiting || options.ask)) return { claims: recorded, source: { kind: 'recorded', canAsk: !options.reloading } };
    try {
      const listed = await deps.disputes.list(id);
      if (listed.ok) return { claims: listed.claims, source: { kind: 'service' } };
      return { claims: recorded, source: { kind: 'unavailable', why: sentence(listed.why) } };
    } catch (error) {
      deps.logger.error({ err: error instanceof Error ? error.message : String(error), order: id }, 'dashboard: listing disputes failed');
      return { claims: recorded, source: { kind: 'unavailable', why: 'Relais failed while asking (see the web process log)' } };
    }
  }

  router.get('/orders/:id', async (req, res) => {
    const record = await deps.ledger.get(req.params.id);
    if (!record) {
      send(req, res, { section: 'orders', title: 'Not found' }, notFoundBody('No order with this id in the ledger (finished orders are kept 90 days).'), 404);
      return;
    }
    const reloading = stillMoving(record, req.query.replayed);
    // Before the timeline is read: listing the claims writes its call (and any newly decided claim) there.
    const disputes = record.shipment ? await disputesOf(record, { reloading, ask: req.query.claims === 'ask' }) : undefined;
    const [timeline, suggestions] = await Promise.all([
      deps.ledger.timeline(record.meta.externalOrderId),
      record.state === 'held' ? suggestionsFor(record) : Promise.resolve([]),
    ]);
    send(
      req, res,
      { section: 'orders', title: record.meta.orderName, refreshSeconds: reloading ? 2 : undefined },
      orderDetailBody({ record, shopName: shopName(record.meta.shopId), timeline, csrf: csrfOf(req), suggestions, ...(disputes ? { disputes } : {}) }),
    );
  });

  router.get('/held', async (req, res) => {
    const [records, unreadyIds] = await Promise.all([
      deps.ledger.listHeld(HELD_PAGE_SIZE),
      deps.ledger.listUnready(unreadySince(deps.now(), deps.shops.all().map((s) => s.policy.unreadyAlertMinutes)), HELD_PAGE_SIZE),
    ]);
    const held = await Promise.all(records.reverse().map(async (record) => ({ record, shopName: shopName(record.meta.shopId), suggestions: await suggestionsFor(record) })));
    // Shipments with no recorded markReady: no courier is offered them, whatever the service calls their state.
    const unready = (await Promise.all(unreadyIds.map(async ({ externalOrderId, since }) => ({ record: await deps.ledger.get(externalOrderId), since }))))
      .flatMap(({ record, since }) => (record?.shipment ? [{ record, since, shopName: shopName(record.meta.shopId) }] : []));
    send(req, res, { section: 'held', title: 'Held orders', heldCount: held.length }, heldBody({ held, unready, csrf: csrfOf(req) }));
  });

  router.get('/money', async (req, res) => {
    const fallbackShop = shopChoices[0]?.id ?? '';
    const shopId = pick(z.string().refine((id) => deps.shops.get(id) !== undefined), req.query.shop, fallbackShop);
    const days = daysParam([7, 30, 90], 30).parse(req.query.days ?? 30);
    const since = new Date(nowMs() - days * 86_400_000);
    const ids = shopId ? await deps.ledger.listShopOrders(shopId, { since, limit: SCAN_LIMIT }) : [];
    const [records, reconciliation] = await Promise.all([loadRecords(deps.ledger, ids), deps.reconciliation?.latestSummary() ?? Promise.resolve(undefined)]);
    send(req, res, { section: 'money', title: 'Cash & reconciliation' }, moneyBody({
      shops: shopChoices, shopId, days, cod: codFigures(records), reconciliation, reconciliationWired: deps.reconciliation !== undefined,
    }));
  });

  // ----------------------------------------------------------------------------------- actions
  /** The held order an action names, or a redirect back to the held list saying why not. */
  async function heldOrder(req: Request, res: Response): Promise<OrderRecord | undefined> {
    const id = String(req.params.id);
    const record = await deps.ledger.get(id);
    if (!record) {
      redirectWithFlash(req, res, '/dashboard/held', { kind: 'error', message: `No order ${id} in the ledger.` });
      return undefined;
    }
    if (record.state !== 'held') {
      redirectWithFlash(req, res, orderHref(id), { kind: 'error', message: `${record.meta.orderName} is ${record.state.replace(/_/g, ' ')}, not held: nothing to replay.` });
      return undefined;
    }
    return record;
  }

  async function replayAndReport(req: Request, res: Response, record: OrderRecord, done: string): Promise<void> {
    const result = await deps.replay(record.meta.externalOrderId);
    deps.logger.info({ order: record.meta.externalOrderId, ok: result.ok }, 'dashboard replay');
    const to = result.ok ? `${orderHref(record.meta.externalOrderId)}?replayed=${String(nowMs())}` : orderHref(record.meta.externalOrderId);
    redirectWithFlash(req, res, to, result.ok
      ? { kind: 'ok', message: `${done}${record.meta.orderName} replayed: it is being dispatched now.` }
      : { kind: 'error', message: `${done}${record.meta.orderName} was not replayed: ${result.why}.` });
  }

  router.post('/held/:id/alias', form, csrf, async (req, res) => {
    const record = await heldOrder(req, res);
    if (!record) return;
    const back = `/dashboard/held`;
    const shop = deps.shops.get(record.meta.shopId);
    if (!shop) {
      redirectWithFlash(req, res, back, { kind: 'error', message: `The shop ${record.meta.shopId} is no longer in the registry.` });
      return;
    }
    const parsed = aliasForm.safeParse(req.body);
    if (!parsed.success) {
      redirectWithFlash(req, res, back, { kind: 'error', message: `Alias not added: ${parsed.error.issues.map((i) => i.message).join('; ')}.` });
      return;
    }
    const { text, neighbourhood } = parsed.data;
    // The target must be a neighbourhood of the shop's own country, spelled as the gazetteer spells it.
    const target = deps.resolver.resolve({ country: shop.country, fields: { city: neighbourhood } });
    if (!target.ok || target.neighbourhood.country !== shop.country) {
      redirectWithFlash(req, res, back, {
        kind: 'error',
        message: `Alias not added: "${neighbourhood}" is not a known neighbourhood in ${shop.country}${target.ok ? '' : ` (${target.reason})`}.`,
      });
      return;
    }
    await deps.aliases.add(shop.id, text, target.neighbourhood.name);
    const added = `Alias "${text}" → ${target.neighbourhood.name} added for ${shop.name}. `;
    // Replaying an order whose address still does not resolve would only hold it again: say so instead.
    const suggestions = await suggestionsFor(record);
    const d = record.order?.dropoff;
    if (d) {
      const check = resolveDeliveryAddress(deps.resolver, d, { country: shop.country, aliases: await deps.aliases.forShop(shop) });
      if (!check.ok) {
        redirectWithFlash(req, res, back, {
          kind: 'error',
          message: `${added}But the address of ${record.meta.orderName} still does not resolve (${check.reason}${suggestions.length ? `; closest: ${suggestions.join(', ')}` : ''}), so it was not replayed.`,
        });
        return;
      }
    }
    await replayAndReport(req, res, record, added);
  });

  router.post('/held/:id/replay', form, csrf, async (req, res) => {
    const record = await heldOrder(req, res);
    if (record) await replayAndReport(req, res, record, '');
  });

  router.post('/orders/:id/disputes', disputeForm, csrf, async (req, res) => {
    const id = String(req.params.id);
    const record = await deps.ledger.get(id);
    if (!record) {
      redirectWithFlash(req, res, '/dashboard/orders', { kind: 'error', message: `No order ${id} in the ledger: no dispute opened.` });
      return;
    }
    const back = orderHref(id);
    const name = record.meta.orderName;
    // Checked here rather than left to the service: the ledger knows, and the page offered no form.
    if (!record.shipment) {
      redirectWithFlash(req, res, back, { kind: 'error', message: `Dispute not opened: ${name} has no shipment yet. A dispute is opened on a shipment, once the order is dispatched.` });
      return;
    }
    const parsed = parseDisputeForm(req.body);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${DISPUTE_FIELD_LABELS[String(i.path[0])] ?? 'form'}: ${i.message}`);
      redirectWithFlash(req, res, back, { kind: 'error', message: `Dispute not opened for ${name}: ${problems.join('; ')}.` });
      return;
    }
    const input = parsed.data;
    // The same form sent twice (a double click, or the back button and send again) would open a second claim.
    const same = (await deps.disputes.lastSeen(id)).find((c) =>
      c.status.toUpperCase() === 'OPEN' && c.reason === input.reason && c.description === input.description && c.claimantId === input.claimantId);
    // Two submissions at the same moment are kept apart by src/disputes (one opening per order at a time).
    if (same) {
      redirectWithFlash(req, res, back, {
        kind: 'error',
        message: `Dispute not opened twice: ${name} already has this open claim (${same.claimId ?? 'no id'}, opened ${formatTime(same.createdAt)}).`,
      });
      return;
    }
    try {
      const result = await deps.disputes.open(id, input);
      deps.logger.info({ order: id, ok: result.ok, claim: result.ok ? result.claim.claimId : undefined }, 'dashboard dispute');
      redirectWithFlash(req, res, back, result.ok
        ? { kind: 'ok', message: `Dispute opened for ${name}: claim ${result.claim.claimId ?? '(the service gave no id)'} on shipment ${result.shipmentId}. The service holds the shipment's settlement until it decides.` }
        : {
          kind: 'error',
          message: result.retryable
            ? `Dispute not opened for ${name}: ${sentence(result.why)}. Reload this page first: if the service received it without answering, the claim is listed below.`
            : `Dispute not opened for ${name}: ${sentence(result.why)}.`,
        });
    } catch (error) {
      // Not the service's answer (src/disputes turns those into results): Relais itself failed, maybe after the claim was opened.
      deps.logger.error({ err: error instanceof Error ? error.message : String(error), order: id }, 'dashboard: opening a dispute failed');
      redirectWithFlash(req, res, back, {
        kind: 'error',
        message: `Dispute for ${name} not confirmed: Relais failed while opening it (see the web process log). Reload this page to see whether the claim was opened before trying again.`,
      });
    }
  });

  // ------------------------------------------------------------------------------------ queues
  // Read-only, whoever asks: see ./queues.ts.
  router.use('/queues', refuseWrites, queuesBoard(deps.queues.all()));

  // ------------------------------------------------------------------------------ not found, errors
  router.use((req, res) => {
    send(req, res, { section: 'none', title: 'Not found' }, notFoundBody('There is no such dashboard page.'), 404);
  });

  router.use(dashboardErrors(deps.logger));

  return router;
}

