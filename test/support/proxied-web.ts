/**
 * A test Relais (no in-process worker) plus a second web process of the test's own that reaches Redis and the
 * ledger's PostgreSQL through TCP fault proxies, so the test can make either silent (blackhole) or refuse
 * connections (reset) for that web process alone.
 */
import { startWeb, type RunningWeb, type WebOptions } from '../../src/main/web.js';
import { startFaultProxy, type FaultProxy } from '../chaos/support/tcp-proxy.js';
import { startTestRelais, type TestRelais } from './relais.js';

export interface ProxiedWeb {
  relais: TestRelais;
  /** In front of Redis. */
  proxy: FaultProxy;
  /** In front of the ledger's PostgreSQL. */
  dbProxy: FaultProxy;
  web: RunningWeb;
  stop(): Promise<void>;
}

export async function startProxiedWeb(options: Partial<WebOptions> = {}): Promise<ProxiedWeb> {
  const relais = await startTestRelais({ inProcessWorker: false });
  const proxy = await startFaultProxy({ targetPort: relais.redis.port });
  const database = new URL(relais.db.url);
  const dbProxy = await startFaultProxy({ targetPort: Number(database.port || 5432), targetHost: database.hostname });
  database.host = `${dbProxy.host}:${dbProxy.port}`;
  const web = await startWeb({
    ...relais.base,
    redisUrl: proxy.url(),
    databaseUrl: database.toString(),
    port: 0,
    ...options,
  });
  return {
    relais,
    proxy,
    dbProxy,
    web,
    async stop() {
      proxy.set({ kind: 'pass' });
      dbProxy.set({ kind: 'pass' });
      await web.close().catch(() => undefined);
      await proxy.close();
      await dbProxy.close();
      await relais.stop();
    },
  };
}
