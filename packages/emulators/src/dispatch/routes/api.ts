/**
 * The ten authenticated operations (spec section 4), each: tag the operation → authenticate → fault
 * gate → validate → act on the organisation's own objects → answer in the wire profile's dialect.
 */
import { Router, type Request, type RequestHandler } from 'express';
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT, PaymentMode } from '../../relais.js';
import { authenticate, orgOf } from '../auth.js';
import { operation } from '../context.js';
import type { EmulatorCore } from '../core.js';
import { faultGate } from '../faults.js';
import { HttpError, parseOrReject } from '../http-errors.js';
import { ErrorCode, stateFromWire, wireState } from '../names.js';
import { priceDelivery } from '../pricing.js';
import {
  cancelSchema,
  createShipmentSchema,
  listQuerySchema,
  markReadySchema,
  openDisputeSchema,
  paymentModeSchema,
  quoteRequestSchema,
} from '../schemas.js';
import { claimBody } from '../serialize.js';
import type { ShipmentRecord } from '../store.js';
import type { OperationName } from '../types.js';
import { routes } from './patterns.js';

/** Cursors are opaque to clients; inside, they name the last creation sequence number served. */
function encodeCursor(seq: number): string {
  return Buffer.from(`after:${seq}`).toString('base64url');
}
function decodeCursor(cursor: string): number {
  const match = /^after:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match?.[1]) throw new HttpError(400, ErrorCode.VALIDATION_ERROR, 'cursor: not a cursor this service issued');
  return Number(match[1]);
}

function param(req: Request, name: string): string {
  const value: unknown = req.params[name];
  return typeof value === 'string' ? value : '';
}

export function apiRouter(core: EmulatorCore): Router {
  const router = Router();
  const auth = authenticate((key) => core.organisations.orgIdForKey(key));
  const gate = faultGate(core.faults, core.latencyTimers);
  const op = (name: OperationName): RequestHandler[] => [operation(name), auth, gate];
  const now = () => core.clock.now();
  const { dialect } = core;
  const { profile } = dialect;
  const shipmentJson = (s: ShipmentRecord) => dialect.shipment(s, core.trackingUrl());

  const ownShipment = (req: Request): ShipmentRecord => {
    const shipment = core.store.shipment(orgOf(req), param(req, 'shipmentId'));
    if (!shipment) throw new HttpError(404, ErrorCode.SHIPMENT_NOT_FOUND, 'shipment not found');
    return shipment;
  };

  router.post(routes.quotes, ...op('createQuote'), (req, res) => {
    const body = parseOrReject(quoteRequestSchema, req.body);
    const paymentModeField = profile.document.requests.paymentModeField;
    const paymentMode =
      parseOrReject(paymentModeSchema, (req.body as Record<string, unknown>)[paymentModeField], paymentModeField) ??
      PaymentMode.prepaid;
    const weightKg = body.parcel?.weight_kg;
    const price = priceDelivery(core.zones, {
      pickup: body.pickup,
      dropoff: body.dropoff,
      weightKg,
      cashOnDelivery: paymentMode === PaymentMode.cashOnDelivery,
    });
    const createdAt = now();
    const quote = core.store.addQuote({
      orgId: orgOf(req),
      createdAt,
      expiresAt: createdAt + core.quoteTtlMs,
      price,
      paymentMode,
      ...(weightKg === undefined ? {} : { weightKg }),
    });
    res.status(201).json(dialect.quote(quote));
  });

  router.get(routes.quote, ...op('getQuote'), (req, res) => {
    const quote = core.store.quote(orgOf(req), param(req, 'quoteId'));
    // Spec: 404 when unknown OR expired on the server side.
    if (!quote || now() >= quote.expiresAt)
      throw new HttpError(404, ErrorCode.QUOTE_NOT_FOUND, 'quote not found or expired');
    res.json(dialect.quote(quote));
  });

  router.post(routes.shipments, ...op('createShipment'), (req, res) => {
    const body = parseOrReject(createShipmentSchema, req.body);
    const orgId = orgOf(req);
    const quote = core.store.quote(orgId, body.quoteId);
    if (!quote) throw new HttpError(404, ErrorCode.QUOTE_NOT_FOUND, 'quote not found');
    if (now() >= quote.expiresAt)
      throw new HttpError(409, ErrorCode.QUOTE_EXPIRED, 'quote expired: request a new quote');
    if (
      quote.paymentMode === PaymentMode.cashOnDelivery &&
      !(body.orderAmountXof !== undefined && body.orderAmountXof > 0)
    ) {
      // Spec: without it only the delivery fee would be collected and the value of the goods lost.
      throw new HttpError(
        400,
        ErrorCode.VALIDATION_ERROR,
        'orderAmountXof: a positive integer amount is required for cash on delivery',
      );
    }
    // A duplicate external_order_id is accepted on purpose: the spec does not refuse it, so a client
    // that retries blindly makes a second shipment, and the tests must be able to see that happen.
    const shipment = core.store.addShipment({
      orgId,
      external_order_id: body.externalOrderId,
      quote_id: quote.quote_id,
      ...(body.orderAmountXof === undefined ? {} : { orderAmountXof: body.orderAmountXof }),
      payment_mode: quote.paymentMode,
      total: quote.price.total,
      createdAt: now(),
    });
    res.status(201).json(shipmentJson(shipment));
  });

  router.get(routes.shipments, ...op('listShipments'), (req, res) => {
    const query = parseOrReject(listQuerySchema, req.query, 'query');
    const limit = query.limit === undefined ? LIST_DEFAULT_LIMIT : Number(query.limit);
    if (limit < 1 || limit > LIST_MAX_LIMIT) {
      throw new HttpError(400, ErrorCode.VALIDATION_ERROR, `limit: must be an integer between 1 and ${LIST_MAX_LIMIT}`);
    }
    // The filter takes the profile's names (any of them for a step), never the emulator's own.
    const status = query.status === undefined ? undefined : stateFromWire(profile, query.status);
    if (query.status !== undefined && status === undefined) {
      throw new HttpError(400, ErrorCode.VALIDATION_ERROR, 'status: not a shipment state');
    }
    const after = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
    const matching = core.store
      .listShipments(orgOf(req))
      .filter((s) => s.seq > after && (status === undefined || s.status === status));
    const page = matching.slice(0, limit);
    const last = page[page.length - 1];
    res.json({
      shipments: page.map(shipmentJson),
      ...(matching.length > limit && last ? { [dialect.spelling('nextCursor')]: encodeCursor(last.seq) } : {}),
    });
  });

  router.get(routes.shipmentByExternalOrder, ...op('getShipmentByExternalOrder'), (req, res) => {
    const shipment = core.store.shipmentByExternalOrder(orgOf(req), param(req, 'externalOrderId'));
    if (!shipment) throw new HttpError(404, ErrorCode.SHIPMENT_NOT_FOUND, 'no shipment for this external order id');
    res.json(shipmentJson(shipment));
  });

  router.get(routes.shipment, ...op('getShipment'), (req, res) => {
    res.json(shipmentJson(ownShipment(req)));
  });

  router.post(routes.markReady, ...op('markReady'), (req, res) => {
    const shipment = ownShipment(req);
    const body = parseOrReject(markReadySchema, req.body);
    if (core.lifecycle.markReady(shipment, body.by) === 'refused') {
      throw new HttpError(409, ErrorCode.INVALID_STATE, 'a cancelled shipment cannot be marked ready');
    }
    res.json(shipmentJson(shipment));
  });

  router.post(routes.cancel, ...op('cancelShipment'), (req, res) => {
    const shipment = ownShipment(req);
    const body = parseOrReject(cancelSchema, req.body);
    if (core.lifecycle.cancel(shipment, body) === 'refused') {
      throw new HttpError(
        409,
        ErrorCode.CANCEL_NOT_ALLOWED,
        `cannot cancel: the shipment is ${wireState(profile, shipment.status)}`,
      );
    }
    res.json(shipmentJson(shipment));
  });

  router.post(routes.openDispute, ...op('openDispute'), (req, res) => {
    const shipment = ownShipment(req);
    const body = parseOrReject(openDisputeSchema, req.body);
    const claim = core.store.addClaim(shipment, {
      reason: body.reason,
      description: body.description,
      claimant_id: body.claimant_id,
      claimant_type: body.claimant_type ?? 'seller',
      created_at: new Date(now()).toISOString(),
    });
    res.status(201).json(claimBody(claim));
  });

  router.get(routes.disputes, ...op('listShipmentDisputes'), (req, res) => {
    res.json({ data: ownShipment(req).claims.map(claimBody) });
  });

  return router;
}
