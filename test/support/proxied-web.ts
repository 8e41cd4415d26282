/**
 * A test Relais (no in-process worker) plus a second web process of the test's own that reaches Redis
 * through a TCP fault proxy, so the test can make Redis silent (blackhole) or refuse connections (reset)
 * for that web process alone.
 */
import { startWeb, type RunningWeb, type WebOptions } from '../../src/main/web.js';
import { startFaultProxy, type FaultProxy } from '../chaos/support/tcp-proxy.js';
import { startTestRelais, type TestRelais } from './relais.js';

export interface ProxiedWeb {
  relais: TestRelais;
  proxy: FaultProxy;
  web: RunningWeb;
  stop(): Promise<void>;
}

export async function startProxiedWeb(options: Partial<WebOptions> = {}): Promise<ProxiedWeb> {
  const relais = await startTestRelais({ inProcessWorker: false });
  const proxy = await startFaultProxy({ targetPort: relais.redis.port });
  const web = await startWeb({ redisUrl: proxy.url(), prefix: relais.prefix, shops: relais.shops, logger: relais.logger, port: 0, ...options });
  return {
    relais, proxy, web,
    async stop() {
      proxy.set({ kind: 'pass' });
      await web.close().catch(() => undefined);
      await proxy.close();
      await relais.stop();
    },
  };
}
