/**
 * What a `relais doctor` check answers, and the small pieces every check uses: the ops checks
 * (src/ops/doctor.ts) and each shop platform's own (StorePlatform.doctor, in its folder under src/shops/platforms/).
 * Keys, tokens and secrets never reach a result.
 */
export type CheckStatus = 'ok' | 'warn' | 'error';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** What was found, in words an operator reads. Never a secret. */
  detail: string;
  /** What to do about it. */
  fix?: string;
}

/** The currency the delivery service collects. */
export const CURRENCY = 'XOF';

/** The shop sells in XOF, or every order of it is held: `where` says where the merchant changes it. */
export function currencyResult(currency: string, where: string): CheckResult {
  const name = 'currency';
  if (currency.toUpperCase() === CURRENCY) return { name, status: 'ok', detail: CURRENCY };
  return {
    name,
    status: 'error',
    detail: `the shop sells in ${currency}: the delivery service collects XOF only, so Relais holds every order of this shop`,
    fix: `set the store currency to ${CURRENCY} (${where}), or remove the shop from the registry`,
  };
}

/** publicUrl + path, keeping a path prefix the public URL may have (https://example.com/relais). */
export function publicEndpoint(publicUrl: string, path: string): string {
  const url = new URL(publicUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  url.search = '';
  url.hash = '';
  return url.href;
}

export function sameUrl(a: string | null | undefined, b: string): boolean {
  return typeof a === 'string' && a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
