/**
 * The public tracking page behind publicTrackingUrl: a small HTML page for the end customer showing
 * the code, the current stage and the dated stages. Nothing personal: no names, no address, no amount.
 */
import type { ShipmentState } from './names.js';
import type { ShipmentRecord } from './store.js';

/** Keyed by the emulator's own state names (names.ts). */
const LABELS: Readonly<Record<ShipmentState, string>> = {
  CREATED: 'Commande enregistrée',
  READY: 'Colis prêt, en attente de livreur',
  ASSIGNED: 'Livreur assigné',
  PICKED_UP: 'Colis récupéré',
  IN_TRANSIT: 'En route',
  OUT_FOR_DELIVERY: 'En cours de livraison',
  DELIVERED: 'Livré',
  DELIVERY_FAILED: 'Livraison échouée',
  RETURNED: 'Retourné à l’expéditeur',
  CANCELLED: 'Annulé',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const label = (status: ShipmentState) => escapeHtml(LABELS[status]);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="fr"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}.status{font-size:1.1rem;font-weight:600}ol{padding-left:1.2rem}li{margin:.3rem 0}
time{color:#666;font-size:.9rem}</style></head><body>${body}</body></html>`;
}

/** `wireStatus`: the current state in the profile's dialect, for the page's data-status attribute. */
export function trackingPageHtml(shipment: ShipmentRecord, wireStatus: string): string {
  const events = shipment.history
    .map((h) => `<li>${label(h.status)} <time datetime="${escapeHtml(h.at)}">${escapeHtml(h.at)}</time></li>`)
    .join('');
  return page(
    `Suivi ${shipment.tracking_code}`,
    `<h1>Suivi du colis ${escapeHtml(shipment.tracking_code)}</h1>
<p class="status" data-status="${escapeHtml(wireStatus)}">${label(shipment.status)}</p>
<ol>${events}</ol>`,
  );
}

export function trackingNotFoundHtml(): string {
  return page('Suivi introuvable', '<h1>Code de suivi introuvable</h1><p>Vérifiez le code reçu par SMS.</p>');
}
