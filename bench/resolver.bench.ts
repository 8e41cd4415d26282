/**
 * `npx tsx bench/resolver.bench.ts`: the CPU of one drop-off resolution (issue 27), what the worker spends per
 * order in src/geo: resolver.resolve then candidatesOf, over every address of the corpus
 * (test/fixtures/addresses), many rounds after a warm-up. Prints µs per address, for both and for each alone (candidatesOf over the
 * resolutions that succeed, averaged over every address). `--rounds N` sets the rounds;
 * `--dump` prints every address's resolution and candidate names instead (to compare two versions' outputs).
 */
import { parseArgs } from 'node:util';
import { candidatesOf } from '../src/geo/candidates.js';
import { NeighbourhoodResolver } from '../src/geo/resolver.js';
import { readCorpus } from './eval-addresses.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '40' }, dump: { type: 'boolean' } },
});
const resolver = NeighbourhoodResolver.load();
const inputs = readCorpus().map((row) => row.input);

function once(): unknown[] {
  return inputs.map((input) => {
    const resolution = resolver.resolve(input);
    const aliases = input.aliases ?? {};
    return resolution.ok ? { resolution, candidates: candidatesOf(resolver, resolution, aliases) } : { resolution };
  });
}

if (values.dump) {
  process.stdout.write(`${JSON.stringify(once(), null, 1)}\n`);
} else {
  const rounds = Number(values.rounds);
  for (let i = 0; i < 5; i++) once(); // warm-up: the JIT and the resolver's per-place memos
  const resolved = inputs.map((input) => ({ input, resolution: resolver.resolve(input) }));
  const steps: [string, () => void][] = [
    ['resolve + candidatesOf', () => once()],
    ['resolve alone', () => inputs.forEach((input) => resolver.resolve(input))],
    [
      'candidatesOf alone',
      () =>
        resolved.forEach(({ input, resolution }) => {
          if (resolution.ok) candidatesOf(resolver, resolution, input.aliases ?? {});
        }),
    ],
  ];
  for (const [label, step] of steps) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < rounds; i++) step();
    const wallMs = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    const n = rounds * inputs.length;
    process.stdout.write(
      `${label}: ${((user + system) / n).toFixed(1)} µs CPU per address (${((wallMs * 1000) / n).toFixed(1)} µs wall), ` +
        `${inputs.length} addresses × ${rounds} rounds\n`,
    );
  }
}
