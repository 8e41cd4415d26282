import { defineConfig } from 'vitest/config';

// Tests talk to real PostgreSQL and real Redis servers (one private redis-server per test file) and real HTTP servers.
// Two cores: keep the number of files running at once small so timings stay honest.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // One PostgreSQL for the run (DATABASE_URL, or a private server); each file makes its own schema in it.
    globalSetup: ['test/support/global-postgres.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // Set-up starts Redis servers, emulators and sometimes worker processes: generous on a loaded machine.
    hookTimeout: 90_000,
    reporters: ['default'],
  },
});
