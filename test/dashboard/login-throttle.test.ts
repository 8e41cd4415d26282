/**
 * Wrong dashboard tokens slow a guesser down without locking the operator out: each one makes its address wait
 * longer (1 s, 2 s, 4 s… up to a minute) before its next token is looked at, the wait is counted in Redis by every
 * web process together and survives a restart, the login page says how long to wait, and the right token is let
 * in once the wait is over.
 *
 * Two web processes on one real Redis: one in this test process, one `relais web` child process, both behind
 * TRUST_PROXY=loopback so each test plays a client of its own address (X-Forwarded-For) and the tests run side by
 * side. Waits are the real ones; a test sleeps only for the Retry-After the web process answered.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryLoginThrottle, RedisLoginThrottle, type LoginThrottle } from '../../src/dashboard/login-throttle.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { spawnWeb, type WebProcess } from '../chaos/support/processes.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';
import { freePort } from '../support/redis.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { randomHex, startTestRelais, type TestRelais } from '../support/relais.js';
import { DashboardSession, type PageResponse } from './session.js';

const TOKEN = `dash_${randomHex(16)}`;

let relais: TestRelais;
let webA: RunningWeb;
let webB: WebProcess;

beforeAll(async () => {
  relais = await startTestRelais({ inProcessWorker: false });
  const startA = startWeb({ ...relais.base, dashboardToken: TOKEN, trustProxy: 'loopback' });
  const startB = spawnWeb(relais, {
    port: await freePort(),
    env: { RELAIS_DASHBOARD_TOKEN: TOKEN, TRUST_PROXY: 'loopback' },
  });
  [webA, webB] = await Promise.all([startA, startB]);
}, 90_000);

afterAll(async () => {
  await webB?.kill('SIGTERM');
  await webA?.close();
  await relais?.stop();
});

/** A login from `address` (as the proxy in front of Relais says), with the session's cookies. */
function loginFrom(url: string, address: string, token: string, session = new DashboardSession(url)) {
  return session.request('/dashboard/login', {
    form: { token, next: '/dashboard/orders' },
    headers: { 'x-forwarded-for': address },
  });
}

/** Sleeps for what the answer's Retry-After says: the wait the web process itself announced. */
async function waitAsTold(answer: PageResponse | Response): Promise<void> {
  const seconds = Number(answer.headers.get('retry-after'));
  expect(seconds).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, seconds * 1000));
}

/** The text of the login page's message, as a person reads it. */
const messageOf = (page: PageResponse) => /<div class="flash error" role="alert">([^<]*)<\/div>/.exec(page.body)?.[1];

describe.concurrent('wrong tokens from one address', () => {
  it('are counted together whichever web process they reach: each makes the address wait longer, and the right token gets in once the wait is over', async () => {
    const address = '203.0.113.10';
    const first = await loginFrom(webA.url, address, 'wrong-guess-1');
    expect(first.status).toBe(401);
    expect(messageOf(first)).toBe('Wrong token. Wait 1 second before trying again.');
    await waitAsTold(first);

    // The other process knows of the first wrong token: the second one doubles the wait.
    const second = await loginFrom(webB.url, address, 'wrong-guess-2');
    expect(second.status).toBe(401);
    expect(messageOf(second)).toBe('Wrong token. Wait 2 seconds before trying again.');
    await waitAsTold(second);

    const third = await loginFrom(webA.url, address, 'wrong-guess-3');
    expect(messageOf(third)).toBe('Wrong token. Wait 4 seconds before trying again.');

    // Within the wait, the right token sent to the other process is answered like a wrong one would be.
    const early = await loginFrom(webB.url, address, TOKEN);
    expect(early.status).toBe(429);
    expect(messageOf(early)).toMatch(/^This address sent a wrong token: wait [1-4] seconds? before trying again\.$/);
    expect(early.headers.getSetCookie()).toEqual([]);

    await waitAsTold(early);
    const afterWait = await loginFrom(webB.url, address, TOKEN);
    expect(afterWait.status).toBe(303);
    expect(afterWait.location).toBe('/dashboard/orders');
  });

  it('are still counted after the web process restarts', async () => {
    const address = '203.0.113.11';
    const web = await startWeb({ ...relais.base, dashboardToken: TOKEN, trustProxy: 'loopback' });
    const first = await loginFrom(web.url, address, 'wrong-guess-1');
    expect(messageOf(first)).toBe('Wrong token. Wait 1 second before trying again.');
    await web.close();
    const restarted = await startWeb({ ...relais.base, dashboardToken: TOKEN, trustProxy: 'loopback' });
    try {
      await waitAsTold(first);
      const second = await loginFrom(restarted.url, address, 'wrong-guess-2');
      expect(messageOf(second)).toBe('Wrong token. Wait 2 seconds before trying again.');
    } finally {
      await restarted.close();
    }
  });

  it('sent in a burst test one token only, and the right token is let in a second later', async () => {
    const address = '203.0.113.12';
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) => loginFrom(i % 2 ? webA.url : webB.url, address, `wrong-guess-${i}`)),
    );
    expect(burst.filter((r) => r.status === 401)).toHaveLength(1);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(11);
    await waitAsTold(burst.find((r) => r.status === 401)!);
    expect((await loginFrom(webA.url, address, TOKEN)).status).toBe(303);
  });

  it("make scripts' bearer tokens wait too, saying how long, and the right bearer gets in after", async () => {
    const address = '203.0.113.13';
    const bearer = (url: string, token: string) =>
      fetch(`${url}/dashboard/orders`, {
        headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': address },
        redirect: 'manual',
      });
    const wrong = await bearer(webB.url, 'wrong-guess-1');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toBe('wrong dashboard token: wait 1 second before trying again\n');
    await waitAsTold(wrong);
    const again = await bearer(webA.url, 'wrong-guess-2');
    expect(await again.text()).toBe('wrong dashboard token: wait 2 seconds before trying again\n');
    const early = await bearer(webB.url, TOKEN);
    expect(early.status).toBe(429);
    expect(await early.text()).toMatch(/^this address sent a wrong token: wait [12] seconds?\n$/);
    await waitAsTold(early);
    expect((await bearer(webB.url, TOKEN)).status).toBe(200);
  });

  it('leave a browser that logged in before free to log in while its address waits; a forged or misused cookie waits with the address', async () => {
    const address = '203.0.113.14';
    const browser = new DashboardSession(webA.url);
    expect((await loginFrom(webA.url, address, TOKEN, browser)).status).toBe(303);
    browser.cookies.delete('relais_session'); // its session since expired; the known-browser cookie stays
    const sessionCookie = (await loginFromNewSession(address)).cookies.get('relais_session')!;

    // Wrong tokens until the address waits 4 s, long enough for the checks below.
    let wrong = await loginFrom(webB.url, address, 'wrong-guess-1');
    for (const expected of ['2 seconds', '4 seconds']) {
      await waitAsTold(wrong);
      wrong = await loginFrom(webB.url, address, 'wrong-guess-again');
      expect(messageOf(wrong)).toBe(`Wrong token. Wait ${expected} before trying again.`);
    }
    expect((await loginFrom(webA.url, address, TOKEN)).status).toBe(429);
    for (const value of [
      sessionCookie,
      'AAAAAAAAAAAAAAAAAAAAAAAA.99999999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ]) {
      const forger = new DashboardSession(webA.url);
      forger.cookies.set('relais_known_browser', value);
      expect((await loginFrom(webA.url, address, TOKEN, forger)).status).toBe(429);
    }
    expect((await loginFrom(webB.url, address, TOKEN, browser)).status).toBe(303);
    expect((await browser.request('/dashboard/orders', { headers: { 'x-forwarded-for': address } })).status).toBe(200);
  });
});

async function loginFromNewSession(address: string): Promise<DashboardSession> {
  const session = new DashboardSession(webA.url);
  expect((await loginFrom(webA.url, address, TOKEN, session)).status).toBe(303);
  return session;
}

describe('addresses behind a reverse proxy', () => {
  const bearer = (url: string, token: string, forwardedFor: string) =>
    fetch(`${url}/dashboard/orders`, {
      headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': forwardedFor },
      redirect: 'manual',
    });

  it("with TRUST_PROXY=loopback, one client's wrong tokens never make another client wait", async () => {
    expect((await bearer(webA.url, 'wrong-guess-1', '203.0.113.20')).status).toBe(401);
    expect((await bearer(webB.url, TOKEN, '198.51.100.7')).status).toBe(200);
    expect((await loginFrom(webA.url, '198.51.100.8', TOKEN)).status).toBe(303);
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot escape its wait by claiming another address', async () => {
    const web = await startWeb({ ...relais.base, dashboardToken: TOKEN });
    try {
      const first = await bearer(web.url, 'wrong-guess-1', '203.0.113.21');
      expect(await first.text()).toBe('wrong dashboard token: wait 1 second before trying again\n');
      await waitAsTold(first);
      const second = await bearer(web.url, 'wrong-guess-2', '198.51.100.9');
      expect(await second.text()).toBe('wrong dashboard token: wait 2 seconds before trying again\n');
      await waitAsTold(second);
      expect((await bearer(web.url, TOKEN, '198.51.100.10')).status).toBe(200);
    } finally {
      await web.close();
    }
  });
});

describe('the login page in a browser', () => {
  let browser: TestBrowser;
  let page: Page;
  beforeAll(async () => {
    browser = await launchChromium();
    page = browser.page;
    // The browser's own address, as the proxy in front of Relais would say it.
    await browser.context.setExtraHTTPHeaders({ 'x-forwarded-for': '203.0.113.30' });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** Types a token and submits the form, returning once the answer's page has loaded. */
  const submit = async (token: string) => {
    await page.fill('input[name="token"]', token);
    await Promise.all([page.waitForEvent('framenavigated'), page.click('button[type="submit"]')]);
    await page.waitForLoadState('load');
  };
  const shown = () => page.locator('.flash.error').textContent();
  /** Waits as long as the page says. */
  const waitAsShown = async () => {
    const seconds = Number(/wait (\d+) seconds?/i.exec((await shown()) ?? '')?.[1]);
    expect(seconds).toBeGreaterThan(0);
    await page.waitForTimeout(seconds * 1000);
  };

  it('says how long to wait after each wrong token, and takes the right token once that time has passed', async () => {
    await page.goto(`${webA.url}/dashboard/login`);
    await submit('wrong-guess-1');
    expect(await shown()).toBe('Wrong token. Wait 1 second before trying again.');
    await waitAsShown();
    await submit('wrong-guess-2');
    expect(await shown()).toBe('Wrong token. Wait 2 seconds before trying again.');
    await waitAsShown();
    await submit('wrong-guess-3');
    expect(await shown()).toBe('Wrong token. Wait 4 seconds before trying again.');

    await submit(TOKEN);
    expect(await shown()).toMatch(/^This address sent a wrong token: wait [1-4] seconds? before trying again\.$/);
    await waitAsShown();
    await submit(TOKEN);
    expect(new URL(page.url()).pathname).toBe('/dashboard/overview');
    expect(await page.locator('h1').textContent()).toBe('Overview');
  });
});

describe('the waits in Redis', () => {
  let cluster: TestRedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  /** The waits a client is given for wrong tokens sent one after another, each once the last wait is over. */
  async function countedWaits(throttle: LoginThrottle, client: string, tries: number): Promise<number[]> {
    const waits: number[] = [];
    for (let i = 0; i < tries; i++) {
      const outcome = await throttle.wrongToken(client);
      expect(outcome.kind).toBe('counted');
      waits.push(outcome.waitMs);
      // A token sent during the wait is not counted and is told what is left of it.
      const during = await throttle.wrongToken(client);
      expect(during.kind).toBe('waiting');
      expect(during.waitMs).toBeLessThanOrEqual(outcome.waitMs);
      while ((await throttle.waitMs(client)) > 0) await new Promise((r) => setTimeout(r, 5));
    }
    return waits;
  }

  const SMALL_WAITS = { firstMs: 20, longestMs: 100, forgetAfterMs: 60_000 };

  async function doublesUpToTheLongest(throttle: LoginThrottle): Promise<void> {
    expect(await countedWaits(throttle, '198.51.100.1', 6)).toEqual([20, 40, 80, 100, 100, 100]);
    await throttle.rightToken('198.51.100.1');
    expect(await countedWaits(throttle, '198.51.100.1', 1)).toEqual([20]);
    expect(await countedWaits(throttle, 'browser:AbC-123_xyz', 2)).toEqual([20, 40]);
  }

  it('double from the first wait up to the longest, start again after the right token, and keep each client apart', async () => {
    await doublesUpToTheLongest(
      new RedisLoginThrottle(relais.redis.client(), `{${relais.redis.prefix}-waits}`, SMALL_WAITS),
    );
  });

  it('work on a Redis Cluster under a prefix without a hash tag (each client in one slot)', async () => {
    await doublesUpToTheLongest(new RedisLoginThrottle(cluster.client(), `relais-waits-${randomHex(4)}`, SMALL_WAITS));
  });

  it('are the same in the count a web process keeps on its own while Redis does not answer', async () => {
    await doublesUpToTheLongest(new MemoryLoginThrottle(Date.now, SMALL_WAITS));
  });

  it('expire: every key the web processes wrote for wrong tokens is forgotten within 15 minutes', async () => {
    const redis = relais.redis.client();
    await loginFrom(webA.url, '203.0.113.15', 'wrong-guess-1');
    const keys = await redis.keys(`${relais.prefix}:dashboard:login:*`);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(15 * 60_000);
    }
  });
});
