/**
 * The one-off HTML pages the shop-connection callbacks answer with (outside the dashboard's layout). Their URLs
 * carry codes or ids the shop sent, so no Referer may carry them on, and no cache may keep the page.
 */
import type { Response } from 'express';
import type { SafeHtml } from '../../dashboard/html.js';

export function sendStandalonePage(res: Response, status: number, csp: string, document: SafeHtml): void {
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).type('html').send(document.value);
}
