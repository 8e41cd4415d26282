/**
 * A private PostgreSQL for the demo and the tests when DATABASE_URL is not set or does not answer: a new cluster
 * in a temporary directory (initdb), served on a free loopback port by the system's own `postgres` binary, with
 * no durability settings (fsync off: it holds nothing worth keeping), removed when stopped. `crashSafe` keeps
 * commits synchronous, so a transaction PostgreSQL acknowledged survives `crash()` (the chaos suite's outage).
 *
 * The binaries are found on the PATH, else where Debian and Ubuntu keep them (/usr/lib/postgresql/<version>/bin,
 * newest first), else where Homebrew does. PostgreSQL refuses to run as root: as root, the cluster is made and
 * served as the `postgres` user (created by Debian's package) or, failing that, `nobody`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const POSTGRES_INSTALL_HINT =
  'PostgreSQL is needed: set DATABASE_URL to a running PostgreSQL, or install its server binaries (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql)';

export interface PrivatePostgres {
  url: string;
  port: number;
  /** The postmaster's process (the chaos suite stops and restarts it). */
  process(): ChildProcess;
  /** Stops the server as `pg_ctl stop -m immediate` would (SIGQUIT: no shutdown checkpoint), keeping its data. */
  crash(): Promise<void>;
  /** Starts the server again on the same port and data after `crash`. */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** The directory holding initdb and postgres, or undefined when none is installed. */
export function findPostgresBinaries(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath && existsSync(join(onPath, '..', 'postgres'))) return join(onPath, '..');
  const candidates: string[] = [];
  for (const root of ['/usr/lib/postgresql', '/opt/homebrew/opt', '/usr/local/opt']) {
    if (!existsSync(root)) continue;
    const versions = readdirSync(root)
      .filter((name) => /^(postgresql@)?\d+$/.test(name))
      .sort((a, b) => Number(b.replace(/\D/g, '')) - Number(a.replace(/\D/g, '')));
    for (const version of versions) candidates.push(join(root, version, 'bin'));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')));
}

/** Whether a PostgreSQL answers at `url` within a few seconds. */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface PrivatePostgresOptions {
  /**
   * A transaction acknowledged before `crash()` is still there after `restart()`: synchronous_commit stays on.
   * Off by default, where a COMMIT returns before its WAL leaves PostgreSQL's memory and an immediate stop loses
   * the last fraction of a second of commits (which a crash test would read as Relais losing orders). fsync stays
   * off either way: PostgreSQL crashes here, not the machine, and the OS keeps what it was handed.
   */
  crashSafe?: boolean;
}

export async function startPrivatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const bin = findPostgresBinaries();
  if (!bin) throw new Error(POSTGRES_INSTALL_HINT);
  const dir = mkdtempSync(join(tmpdir(), 'relais-pg-'));
  const data = join(dir, 'data');
  const owner = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const as = owner ? { uid: owner.uid, gid: owner.gid } : {};
  initDatabase(bin, dir, data, as);
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const url = `postgres://relais@127.0.0.1:${port}/postgres`;

  const launch = async (): Promise<void> => {
    output = '';
    child = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        `synchronous_commit=${options.crashSafe ? 'on' : 'off'}`,
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=600',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...as },
    );
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const deadline = Date.now() + 20_000;
    while (!(await postgresAnswers(url))) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`postgres did not start on port ${port}: ${output.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((r) => running.once('exit', r));
    running.kill(signal);
    await exited;
  };

  try {
    await launch();
  } catch (error) {
    await halt('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    port,
    process: () => child!,
    crash: () => halt('SIGQUIT'),
    restart: launch,
    stop: async () => {
      // SIGINT is PostgreSQL's fast shutdown: connections are closed, then it exits.
      await halt('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates the cluster in `data` (user relais, trust auth); on failure removes `dir` and says why. */
function initDatabase(bin: string, dir: string, data: string, as: { uid?: number; gid?: number }): void {
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'relais', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C'],
    {
      encoding: 'utf8',
      cwd: dir,
      ...as,
    },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${join(bin, 'initdb')}): ${init.stderr || init.stdout || init.error?.message}`);
  }
}

/** The user PostgreSQL runs as when started by root: `postgres` when it exists, else `nobody`. */
function unprivilegedUser(): { uid: number; gid: number } {
  const passwd = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'));
  const entry = passwd.find((fields) => fields[0] === 'postgres') ?? passwd.find((fields) => fields[0] === 'nobody');
  if (!entry)
    throw new Error(
      'PostgreSQL cannot run as root, and there is neither a `postgres` nor a `nobody` user to run it as',
    );
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

/** A port nothing listens on at the moment (the OS's pick), for a private server. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address && typeof address === 'object') server.close(() => resolve(address.port));
      else reject(new Error('no free port'));
    });
  });
}
