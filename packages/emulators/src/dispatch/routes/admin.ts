/**
 * Admin endpoints for other processes (the CLI demo, chaos tests): the programmatic API over HTTP.
 * Only on the main port, under /_emulator/, never counted in calls(). No key: the emulator binds
 * 127.0.0.1 and exists to be driven.
 */
import { Router } from 'express';
import { z } from 'zod';
import type { EmulatorCore } from '../core.js';
import { faultRuleSchema } from '../faults.js';
import { HttpError, parseOrReject } from '../http-errors.js';
import { ErrorCode } from '../names.js';
import { snapshot } from '../serialize.js';
import type { RecordedCall } from '../types.js';

export const ADMIN_PREFIX = '/_emulator';

const advanceSchema = z.object({
  ms: z
    .number()
    .int()
    .min(0)
    .max(365 * 86_400_000),
});
const runUntilIdleSchema = z.object({ maxMs: z.number().int().positive().optional() }).nullish();
const decideSchema = z.object({
  status: z.enum(['COMPENSATED', 'REJECTED']),
  outcome: z.string().refine((s) => s.trim() !== '', { message: 'must not be empty' }),
});
const webhookSchema = z.object({ url: z.url().nullish(), secret: z.string().min(1).nullish() });

export function adminRouter(core: EmulatorCore, calls: () => RecordedCall[]): Router {
  const router = Router();
  const now = () => new Date(core.clock.now()).toISOString();

  router.get(`${ADMIN_PREFIX}/now`, (_req, res) => {
    res.json({ now: now() });
  });

  router.post(`${ADMIN_PREFIX}/advance`, async (req, res) => {
    const { ms } = parseOrReject(advanceSchema, req.body);
    await core.advance(ms);
    res.json({ now: now() });
  });

  router.post(`${ADMIN_PREFIX}/run-until-idle`, async (req, res) => {
    const body = parseOrReject(runUntilIdleSchema, req.body);
    await core.runUntilIdle(body?.maxMs);
    res.json({ now: now() });
  });

  router.post(`${ADMIN_PREFIX}/faults`, (req, res) => {
    // Accepts {rule: {...}} as the contract writes it, or the rule itself.
    const raw: unknown = req.body;
    const candidate = typeof raw === 'object' && raw !== null && 'rule' in raw ? raw.rule : raw;
    core.faults.add(parseOrReject(faultRuleSchema, candidate));
    res.status(201).json({ ok: true });
  });

  router.delete(`${ADMIN_PREFIX}/faults`, (_req, res) => {
    core.faults.clear();
    res.status(204).end();
  });

  router.get(`${ADMIN_PREFIX}/shipments`, (req, res) => {
    const org = typeof req.query.org === 'string' ? req.query.org : undefined;
    res.json({ shipments: core.store.listShipments(org).map((s) => snapshot(s, core.trackingUrl())) });
  });

  router.get(`${ADMIN_PREFIX}/calls`, (_req, res) => {
    res.json({ calls: calls() });
  });

  router.get(`${ADMIN_PREFIX}/webhooks`, (_req, res) => {
    res.json({ deliveries: core.webhooks.deliveries() });
  });

  router.post(`${ADMIN_PREFIX}/disputes/:claimId/decide`, (req, res) => {
    const decision = parseOrReject(decideSchema, req.body);
    const found = core.store.claim(req.params.claimId);
    if (!found) throw new HttpError(404, ErrorCode.NOT_FOUND, 'unknown claim');
    if (found.claim.status !== 'OPEN') throw new HttpError(409, ErrorCode.INVALID_STATE, 'claim already decided');
    core.decideDispute(found.claim.claim_id, decision);
    res.json(found.claim);
  });

  router.put(`${ADMIN_PREFIX}/organisations/:id/webhook`, (req, res) => {
    const body = parseOrReject(webhookSchema, req.body);
    if (!core.organisations.has(req.params.id)) throw new HttpError(404, ErrorCode.NOT_FOUND, 'unknown organisation');
    core.organisations.setWebhook(req.params.id, body.url ?? undefined, body.secret ?? undefined);
    res.status(204).end();
  });

  return router;
}
