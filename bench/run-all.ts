/**
 * Every benchmark, one after the other (never two at once: they would measure each other), each in its
 * own process. `npm run bench` runs the full sizes; `npm run bench -- --quick` a smoke run of each.
 * `--only receiver,pipeline` picks some by name.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

interface Bench {
  name: string;
  file: string;
  quickArgs: string[];
}

const BENCHES: Bench[] = [
  { name: 'receiver', file: 'bench/receiver.bench.ts', quickArgs: ['--quick'] },
  { name: 'pipeline', file: 'bench/pipeline.bench.ts', quickArgs: ['--quick'] },
  { name: 'flash-sale', file: 'bench/flash-sale.bench.ts', quickArgs: ['--quick'] },
  { name: 'scale', file: 'bench/scale.bench.ts', quickArgs: ['--quick'] },
  { name: 'overview', file: 'bench/overview.bench.ts', quickArgs: ['--quick'] },
  // Owned by the checkout work (issue 6); it takes sizes rather than --quick.
  {
    name: 'checkout-rates',
    file: 'bench/checkout-rates.bench.ts',
    quickArgs: ['--rounds', '2', '--hits', '300', '--misses', '100'],
  },
];

function run(file: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
    strict: true,
  });
  const only = values.only?.split(',').map((s) => s.trim());
  const unknown = only?.filter((name) => !BENCHES.some((b) => b.name === name)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown bench ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`);
  const failed: string[] = [];
  for (const bench of BENCHES.filter((b) => !only || only.includes(b.name))) {
    console.log(`\n===== ${bench.name}${values.quick ? ' (quick)' : ''} =====`);
    const code = await run(bench.file, values.quick ? bench.quickArgs : []);
    if (code !== 0) failed.push(bench.name);
  }
  if (failed.length > 0) {
    console.error(`\nfailed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
