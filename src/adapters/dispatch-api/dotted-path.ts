/**
 * Dotted paths ("data.shipment.id") into JSON bodies: how the wire profile names where a field sits, read by the
 * client's readers and probe, written by the emulator when it builds a body in a profile's shape.
 */

/** The value at a dotted path; undefined as soon as a step is not a JSON object (an array, a string, null). */
export function getPath(value: unknown, dotted: string): unknown {
  let current: unknown = value;
  for (const part of dotted.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Writes `value` at a dotted path, creating the objects on the way (the emulator writes bodies this way). */
export function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let current = target;
  for (const part of parts.slice(0, -1)) {
    const next = current[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) current[part] = {};
    current = current[part] as Record<string, unknown>;
  }
  current[parts.at(-1)!] = value;
}

/** The first non-blank string found at one of the paths, tried in order. */
export function firstString(value: unknown, candidates: readonly string[]): string | undefined {
  for (const p of candidates) {
    const found = getPath(value, p);
    if (typeof found === 'string' && found.trim() !== '') return found;
  }
  return undefined;
}
