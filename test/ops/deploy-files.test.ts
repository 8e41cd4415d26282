/**
 * The deployment files keep their secure defaults: compose publishes ports on 127.0.0.1 unless told
 * otherwise and gives every service a restart policy, a healthcheck and a stop timeout longer than the
 * drain; .env never enters the image; the Procfile starts Node through npm, as the project pins it.
 * (Read as text: no container engine runs here.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const compose = readFileSync('docker-compose.yml', 'utf8');

/** The top-level services' blocks, by name (two-space indented keys under `services:`). */
function services(): Map<string, string> {
  const body = compose.slice(compose.indexOf('\nservices:\n'), compose.indexOf('\nvolumes:\n'));
  const blocks = new Map<string, string>();
  for (const part of body.split(/\n(?= {2}[a-z][\w-]*:\n)/).slice(1))
    blocks.set(/^ {2}([\w-]+):/.exec(part)![1]!, part);
  return blocks;
}

describe('docker-compose.yml', () => {
  it('publishes every port on 127.0.0.1 unless RELAIS_BIND_ADDRESS says otherwise', () => {
    const ports = [...compose.matchAll(/^\s+- "([^"]+)"\s*$/gm)].map((m) => m[1]!).filter((p) => /:\d+$/.test(p));
    expect(ports.length).toBeGreaterThanOrEqual(3);
    for (const port of ports) expect(port).toMatch(/^\$\{RELAIS_BIND_ADDRESS:-127\.0\.0\.1\}:\d+:\d+$/);
  });

  it('gives every long-running service restart: unless-stopped, a healthcheck, and a stop timeout longer than its drain', () => {
    expect([...services().keys()]).toEqual(['postgres', 'migrate', 'redis', 'dispatch-emulator', 'web', 'worker']);
    const anchor = /x-relais: &relais\n([\s\S]*?)\n\n/.exec(compose)![1]!;
    for (const [name, block] of services()) {
      if (name === 'migrate') continue; // one-shot, below
      const text = block.includes('<<: *relais') ? `${block}\n${anchor}` : block;
      expect(text, name).toMatch(/restart: unless-stopped/);
      expect(text, name).toMatch(/healthcheck:/);
    }
    const grace = (name: string) => Number(/stop_grace_period: (\d+)s/.exec(services().get(name)!)![1]);
    expect(grace('web')).toBeGreaterThanOrEqual(35); // web drains 25 s
    expect(grace('worker')).toBeGreaterThanOrEqual(35); // the worker's jobs hold a 30 s lock
  });

  it('migrates the ledger once PostgreSQL is healthy, and starts web and worker only after the migration succeeded', () => {
    const migrate = services().get('migrate')!;
    expect(migrate).toMatch(/restart: "no"/);
    expect(migrate).toMatch(/command: \["migrate"\]/);
    expect(migrate).toMatch(/postgres:\n\s+condition: service_healthy/);
    expect(compose).toMatch(/x-relais: &relais[\s\S]*?migrate:\n\s+condition: service_completed_successfully/);
    // The database's port is not published, and its password only comes from the environment.
    expect(services().get('postgres')!).not.toMatch(/ports:/);
    expect(compose).toMatch(/POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:\?/);
  });

  it('reads secrets from an env file, never from values written in the file', () => {
    expect(compose).toMatch(/env_file:\n\s+- path: \.env/);
    expect(compose).not.toMatch(/(TOKEN|SECRET|API_KEY)\w*: ["']?[A-Za-z0-9_-]{8,}/);
  });
});

describe('.dockerignore and Procfile', () => {
  it('.dockerignore keeps .env and other env files out of the image', () => {
    const ignored = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((l) => l.trim());
    expect(ignored).toContain('.env');
    expect(ignored).toContain('.env.*');
  });

  it('the Procfile migrates the ledger at release, then starts web and worker through npm scripts, so the pinned Node runs them', () => {
    expect(readFileSync('Procfile', 'utf8').trim().split('\n')).toEqual([
      'release: npm run migrate',
      'web: npm run start:web',
      'worker: npm run start:worker',
    ]);
  });
});
