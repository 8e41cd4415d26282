/**
 * The WooCommerce emulator's app authorisation (`/wc-auth/v1/authorize`), driven as a merchant's browser and an
 * app do it over real HTTP: the approval page's form submitted with its Approve or Deny button, the keys POSTed
 * to a real callback server on 127.0.0.1, then used on the REST API.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';

interface Posted {
  headers: IncomingHttpHeaders;
  body: string;
}

let woo: WooEmulator;
let app: Server;
let appUrl: string;
let posted: Posted[] = [];
/** What the app's callback answers next. */
let callbackStatus = 200;

beforeAll(async () => {
  woo = await startWooEmulator({ shops: [{ id: 'abidjan-pagne', consumerKey: 'ck_cfg', consumerSecret: 'cs_cfg' }] });
  app = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      posted.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(callbackStatus, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await woo?.close();
  await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
});
beforeEach(() => {
  posted = [];
  callbackStatus = 200;
});

const site = () => woo.siteUrl('abidjan-pagne');
const handshake = (overrides: Record<string, string> = {}) =>
  new URLSearchParams({
    app_name: 'Relais',
    scope: 'read_write',
    user_id: 'state-123',
    return_url: `${appUrl}/return`,
    callback_url: `${appUrl}/callback`,
    ...overrides,
  });

/** GET the approval page, then submit its form with one of its buttons, as a browser does. */
async function decide(decision: 'approve' | 'deny', overrides: Record<string, string> = {}) {
  const page = await fetch(`${site()}/wc-auth/v1/authorize?${handshake(overrides).toString()}`);
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  const fields = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields.set(match[1]!, match[2]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"'));
  fields.set('decision', decision);
  return fetch(action!, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
    redirect: 'manual',
  });
}

const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;

describe('WooCommerce emulator: app authorisation', () => {
  it('shows an approval page naming the app and the scope, with Approve and Deny buttons in one form', async () => {
    const page = await fetch(`${site()}/wc-auth/v1/authorize?${handshake({ app_name: 'Relais <b>' }).toString()}`);
    const html = await page.text();
    expect(html).toContain('Relais &lt;b&gt; would like to connect to your store');
    expect(html).toContain('<strong>Read/Write</strong>');
    expect(html).toContain('<button type="submit" name="decision" value="approve">Approve</button>');
    expect(html).toContain('<button type="submit" name="decision" value="deny">Deny</button>');
  });

  it('on approval POSTs a new read_write key pair as JSON to callback_url, redirects to return_url with success=1, and the key works on the REST API', async () => {
    const answer = await decide('approve');
    expect(answer.status).toBe(302);
    const back = new URL(answer.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${appUrl}/return`);
    expect(Object.fromEntries(back.searchParams)).toEqual({ success: '1', user_id: 'state-123' });

    expect(posted).toHaveLength(1);
    expect(posted[0]!.headers['content-type']).toBe('application/json;charset=UTF-8');
    const keys = JSON.parse(posted[0]!.body) as Record<string, unknown>;
    expect(keys).toMatchObject({ user_id: 'state-123', key_permissions: 'read_write' });
    expect(keys.key_id).toEqual(expect.any(Number));
    expect(keys.consumer_key).toMatch(/^ck_[0-9a-f]{40}$/);
    expect(keys.consumer_secret).toMatch(/^cs_[0-9a-f]{40}$/);

    const auth = basic(keys.consumer_key as string, keys.consumer_secret as string);
    const read = await fetch(`${site()}/wp-json/wc/v3/settings/general/woocommerce_currency`, {
      headers: { Authorization: auth },
    });
    expect(read.status).toBe(200);
    const write = await fetch(`${site()}/wp-json/wc/v3/webhooks`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ topic: 'order.created', delivery_url: `${appUrl}/hook`, secret: 's' }),
    });
    expect(write.status).toBe(201);
    expect(woo.issuedKeys('abidjan-pagne').map((k) => k.keyId)).toContain(keys.key_id);
    expect(woo.authorizations().at(-1)).toMatchObject({ decision: 'approved', callbackStatus: 200 });
  });

  it('gives a read-scoped key only read permission', async () => {
    await decide('approve', { scope: 'read' });
    const keys = JSON.parse(posted[0]!.body) as { consumer_key: string; consumer_secret: string };
    const write = await fetch(`${site()}/wp-json/wc/v3/webhooks`, {
      method: 'POST',
      headers: { Authorization: basic(keys.consumer_key, keys.consumer_secret), 'Content-Type': 'application/json' },
      body: JSON.stringify({ topic: 'order.created', delivery_url: `${appUrl}/hook` }),
    });
    expect(write.status).toBe(401);
    expect(((await write.json()) as { message: string }).message).toBe(
      'The API key provided does not have write permissions.',
    );
  });

  it('when the callback answers anything but 200 deletes the key, does not redirect, and shows core’s error', async () => {
    callbackStatus = 201;
    const answer = await decide('approve');
    expect(answer.status).toBe(401);
    expect(await answer.text()).toContain(
      'Error: An error occurred in the request and at the time were unable to send the consumer data.',
    );
    const keys = JSON.parse(posted[0]!.body) as { consumer_key: string; consumer_secret: string };
    const read = await fetch(`${site()}/wp-json/wc/v3/settings/general`, {
      headers: { Authorization: basic(keys.consumer_key, keys.consumer_secret) },
    });
    expect(read.status).toBe(401);
    expect(woo.authorizations().at(-1)).toMatchObject({ decision: 'approved', callbackStatus: 201, keyId: null });
  });

  it('on denial redirects to return_url with success=0 and the user_id, creating no key and posting nothing', async () => {
    const before = woo.issuedKeys('abidjan-pagne').length;
    const answer = await decide('deny', { user_id: 'denied-1' });
    expect(answer.status).toBe(302);
    expect(Object.fromEntries(new URL(answer.headers.get('location')!).searchParams)).toEqual({
      success: '0',
      user_id: 'denied-1',
    });
    expect(posted).toHaveLength(0);
    expect(woo.issuedKeys('abidjan-pagne')).toHaveLength(before);
  });

  it('refuses as core does: a missing parameter, an unknown scope, an http callback_url off loopback', async () => {
    const refusal = async (query: URLSearchParams) => {
      const page = await fetch(`${site()}/wc-auth/v1/authorize?${query.toString()}`);
      expect(page.status).toBe(401);
      return /Error: ([^<]*)/.exec(await page.text())?.[1];
    };
    const missing = handshake();
    missing.delete('callback_url');
    expect(await refusal(missing)).toBe('Missing parameter callback_url.');
    expect(await refusal(handshake({ scope: 'admin' }))).toBe('Invalid scope admin.');
    expect(await refusal(handshake({ callback_url: 'http://relais.example.com/callback' }))).toBe(
      'The callback_url needs to be over SSL.',
    );
  });

  it('refuses an approval posted without the page’s nonce, or with a nonce already used', async () => {
    const post = (fields: URLSearchParams) =>
      fetch(`${site()}/wc-auth/v1/authorize`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: fields.toString(),
        redirect: 'manual',
      });
    const forged = handshake();
    forged.set('decision', 'approve');
    const answer = await post(forged);
    expect(answer.status).toBe(401);
    expect(await answer.text()).toContain('Error: Invalid nonce verification.');

    const html = await (await fetch(`${site()}/wc-auth/v1/authorize?${handshake().toString()}`)).text();
    const nonce = /name="wc_auth_nonce" value="([^"]+)"/.exec(html)![1]!;
    const fields = handshake({ wc_auth_nonce: nonce, decision: 'approve' });
    expect((await post(fields)).status).toBe(302);
    expect((await post(fields)).status).toBe(401);
    expect(posted).toHaveLength(1);
  });
});
