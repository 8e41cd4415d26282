/**
 * Preloaded into a `relais` CLI process by a bench (`node --import tsx --import bench/lib/count-on-exit.ts …`):
 * counts the SQL statements and Redis commands it sends (store-counters.ts), and prints them with its peak RSS
 * on stderr as it exits, on one line starting BENCH_COUNTS.
 */
import { countStoreRequests, storeCounts } from './store-counters.js';

countStoreRequests();
process.on('exit', () => {
  const maxRssBytes = process.resourceUsage().maxRSS * 1024;
  process.stderr.write(`\nBENCH_COUNTS ${JSON.stringify({ ...storeCounts(), maxRssBytes })}\n`);
});
