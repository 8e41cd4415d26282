/**
 * Public operations (no key; a key, if sent, is ignored): trackByCode, simulatePrice and the HTML
 * tracking page. Served on the tracking host when a tracking port is configured.
 */
import { Router, type Request } from 'express';
import { TRACKING_CODE_LENGTH } from '../../relais.js';
import { operation } from '../context.js';
import type { EmulatorCore } from '../core.js';
import { faultGate } from '../faults.js';
import { HttpError, parseOrReject } from '../http-errors.js';
import { ErrorCode, wireState } from '../names.js';
import { priceDelivery } from '../pricing.js';
import { simulatePriceSchema } from '../schemas.js';
import type { ShipmentRecord } from '../store.js';
import { trackingNotFoundHtml, trackingPageHtml } from '../tracking-page.js';
import { routes } from './patterns.js';

const CODE_PATTERN = new RegExp(`^[A-Z0-9]{${TRACKING_CODE_LENGTH}}$`);

export function publicRouter(core: EmulatorCore): Router {
  const router = Router();
  const gate = faultGate(core.faults, core.latencyTimers);

  /** Codes are printed upper-case; a recipient typing them in lower case still finds the parcel. */
  const byCode = (req: Request): ShipmentRecord | undefined => {
    const raw: unknown = req.params.trackingCode;
    const code = typeof raw === 'string' ? raw.toUpperCase() : '';
    return CODE_PATTERN.test(code) ? core.store.byCode(code) : undefined;
  };

  // Registered before the tracking route: "simulate-price" is itself a valid path segment.
  router.post(routes.simulatePrice, operation('simulatePrice'), gate, (req, res) => {
    const body = parseOrReject(simulatePriceSchema, req.body);
    const price = priceDelivery(core.zones, {
      pickup: { city: body.pickup_city },
      dropoff: { city: body.dropoff_city },
      weightKg: body.weight_kg,
      cashOnDelivery: false,
    });
    res.json(core.dialect.priceSimulation(price.total));
  });

  router.get(routes.tracking, operation('trackByCode'), gate, (req, res) => {
    const shipment = byCode(req);
    if (!shipment) throw new HttpError(404, ErrorCode.NOT_FOUND, 'unknown tracking code');
    res.json(core.dialect.trackingView(shipment));
  });

  router.get(routes.trackingPage, operation('trackingPage'), (req, res) => {
    const shipment = byCode(req);
    res.type('html');
    if (!shipment) {
      res.status(404).send(trackingNotFoundHtml());
      return;
    }
    res
      .set('Cache-Control', 'no-store')
      .send(trackingPageHtml(shipment, wireState(core.dialect.profile, shipment.status)));
  });

  return router;
}
