/**
 * Routing a shop's Shopify calls to a local emulator. The library always calls https://{shop}/admin/api/...,
 * through a fetch that is process-global (`setAbstractFetchFunc`) and read once, when a client is built. A shop
 * registered with an `adminUrl` gets a client built with a fetch of its own that sends its https://{domain}
 * calls there (admin.ts); the OAuth token calls (access-token.ts), which take no per-call fetch, go through the
 * process-wide one installed by routeShopAdmin. Importing this module changes no fetch.
 */
import '@shopify/shopify-api/adapters/node';
import { abstractFetch, setAbstractFetchFunc } from '@shopify/shopify-api/runtime';

/**
 * The fetch of a client for a shop served at `adminUrl` (a local emulator): its https://{domain} requests go
 * there, path and query kept; any other request goes out through the global fetch unchanged.
 */
export function fetchRoutedTo(domain: string, adminUrl: string): typeof fetch {
  const host = domain.toLowerCase();
  const base = adminUrl.replace(/\/+$/, '');
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.protocol !== 'https:' || url.hostname.toLowerCase() !== host) return globalThis.fetch(input, init);
    const target = `${base}${url.pathname}${url.search}`;
    if (!(input instanceof Request)) return globalThis.fetch(target, init);
    const request = new Request(input, init);
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    return globalThis.fetch(target, {
      method: request.method,
      headers: request.headers,
      body,
      signal: request.signal,
      redirect: 'manual',
    });
  };
}

/**
 * Runs `build` (which creates the library's client) with `fetchFn` as the library's fetch, then puts the
 * process-global one back. The library has no per-client fetch option, but each client keeps the fetch it was
 * built with, and building is synchronous, so no other client can be built with this one.
 */
export function buildWithFetch<T>(fetchFn: typeof fetch, build: () => T): T {
  const processFetch = abstractFetch;
  setAbstractFetchFunc(fetchFn);
  try {
    return build();
  } finally {
    setAbstractFetchFunc(processFetch);
  }
}

/** host (myshopify domain) → base URL of the emulator serving it, for the OAuth token calls (below). */
const adminUrlByHost = new Map<string, string>();
let tokenCallsRouted = false;

/**
 * Sends a shop's calls made through the library's process-wide fetch (the OAuth token endpoint, which
 * \`auth.clientCredentials\` and \`auth.refreshToken\` call with no per-call fetch) to \`adminUrl\`, a local emulator.
 * Installed by the first shop configured with an emulator's adminUrl that uses OAuth, never on import; every
 * other host goes to the fetch that was in place.
 */
export function routeShopAdmin(domain: string, adminUrl: string | undefined): void {
  if (adminUrl === undefined) {
    adminUrlByHost.delete(domain.toLowerCase());
    return;
  }
  adminUrlByHost.set(domain.toLowerCase(), adminUrl.replace(/\/+$/, ''));
  if (tokenCallsRouted) return;
  tokenCallsRouted = true;
  const processFetch = abstractFetch;
  setAbstractFetchFunc(async (input, init) => {
    const host = new URL(input instanceof Request ? input.url : String(input)).hostname.toLowerCase();
    const base = adminUrlByHost.get(host);
    return base === undefined ? processFetch(input, init) : fetchRoutedTo(host, base)(input, init);
  });
}
