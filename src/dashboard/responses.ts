/**
 * How a route answers: a page in the shell (with the session's CSRF token and the flash message left by
 * the previous action), or a redirect carrying a signed flash message for the next page.
 */
import type { Request, Response } from 'express';
import { clearCookie, FLASH_COOKIE, readCookie, setCookie, type Flash, type SessionSigner } from './auth.js';
import { page, type PageContext } from './layout.js';
import type { SafeHtml } from './html.js';
import type { Viewer } from './middleware/auth.js';

export interface Responses {
  send(req: Request, res: Response, ctx: Omit<PageContext, 'csrf' | 'flash'>, body: SafeHtml, status?: number): void;
  redirectWithFlash(req: Request, res: Response, to: string, flash: Flash): void;
  /** The session's CSRF token for the page's forms; undefined for bearer requests. */
  csrfOf(req: Request): string | undefined;
}

export function responses(signer: SessionSigner, viewerOf: (req: Request) => Viewer, nowMs: () => number): Responses {
  const csrfOf = (req: Request): string | undefined => {
    const viewer = viewerOf(req);
    return viewer.kind === 'session' ? viewer.csrf : undefined;
  };

  function takeFlash(req: Request, res: Response): Flash | undefined {
    const raw = readCookie(req, FLASH_COOKIE);
    if (raw === undefined) return undefined;
    clearCookie(req, res, FLASH_COOKIE);
    return signer.readFlash(raw, nowMs());
  }

  return {
    csrfOf,
    send(req, res, ctx, body, status = 200) {
      res
        .status(status)
        .type('html')
        .send(page({ ...ctx, csrf: csrfOf(req), flash: takeFlash(req, res) }, body));
    },
    redirectWithFlash(req, res, to, flash) {
      // A cookie holds about 4 kB: a long resolver explanation is cut rather than silently dropped.
      const message = flash.message.length > 800 ? `${flash.message.slice(0, 799)}…` : flash.message;
      setCookie(req, res, FLASH_COOKIE, signer.flashCookie({ ...flash, message }, nowMs()), 60_000);
      res.redirect(303, to);
    },
  };
}
