/**
 * Vitest global set-up: one PostgreSQL for the whole run. DATABASE_URL when it answers, otherwise a private server
 * started from the system's binaries (src/main/private-postgres.ts), stopped after the run. Each test file then
 * works in a schema of its own (test/support/postgres.ts), so files never see each other's rows.
 */
import { postgresAnswers, startPrivatePostgres, type PrivatePostgres } from '../../src/main/private-postgres.js';

let server: PrivatePostgres | undefined;

export async function setup(): Promise<void> {
  const given = process.env.DATABASE_URL;
  if (given && (await postgresAnswers(given))) {
    process.env.RELAIS_TEST_DATABASE_URL = given;
    return;
  }
  server = await startPrivatePostgres();
  process.env.RELAIS_TEST_DATABASE_URL = server.url;
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
