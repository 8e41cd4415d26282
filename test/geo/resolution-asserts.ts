/** Narrowing a Resolution in tests, with the resolver's own words when it is not what the test expects. */
import type { Resolution } from '../../src/geo/resolver.js';

export function resolved(r: Resolution): Extract<Resolution, { ok: true }> {
  if (!r.ok) throw new Error(`expected a neighbourhood, got: ${r.reason}`);
  return r;
}

export function held(r: Resolution): Extract<Resolution, { ok: false }> {
  if (r.ok) throw new Error(`expected no neighbourhood, got ${r.neighbourhood.name} (${r.confidence})`);
  return r;
}
