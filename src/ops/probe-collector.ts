/**
 * Reading the resources probe saw (quotes, shipments, tracking views...) against the wire profile: which of a
 * field's spellings matched, the keys the profile does not know (with a guess where one is safe), and every state
 * name seen, mapped or guessed. One Collector gathers across all the answers of a run, each finding once.
 */
import { getPath } from '../adapters/dispatch-api/dotted-path.js';
import type { FieldKey, WireProfile } from '../adapters/dispatch-api/profile.js';
import type { Analysis, FieldFinding, Resource, StateFinding, UnknownKey } from './probe-findings.js';
import { FIELD_GUESSES, FIXED_NAMES, guessStep, isRecord, RESOURCE_FIELDS } from './probe-guesses.js';

/** Type and a short example of a value, for the report. */
function example(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `list of ${value.length}`;
  if (isRecord(value)) return `object {${Object.keys(value).slice(0, 6).join(', ')}}`;
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`;
}

/** The first of a field's spellings present in the body (null counts as present: the service said "none"). */
function presentSpelling(profile: WireProfile, body: unknown, field: FieldKey): string | undefined {
  return profile.document.fields[field].find((p) => getPath(body, p) !== undefined);
}

export class Collector {
  readonly #fields = new Map<string, FieldFinding>();
  readonly #unknown = new Map<string, UnknownKey>();
  readonly #states = new Map<string, StateFinding>();

  constructor(private readonly profile: WireProfile) {}

  /** Reads one resource body: its fields, its unknown keys, then what it nests (breakdown, status, history). */
  resource(resource: Resource, body: unknown, seenIn: string): void {
    if (!isRecord(body)) return;
    const fields = RESOURCE_FIELDS[resource] ?? [];
    const found = this.#matchFields(resource, body, fields);
    this.#unknownKeys(resource, body, fields, found);

    const breakdown = found.get('breakdown');
    if (resource === 'quote' && breakdown !== undefined) this.resource('breakdown', getPath(body, breakdown), seenIn);

    const status = found.get('status');
    if (status !== undefined) {
      const value = getPath(body, status);
      if (typeof value === 'string') this.state(value, `${seenIn} status`);
    }
    const histories = [found.get('statusHistory'), resource === 'tracking view' ? 'events' : undefined];
    for (const path of histories) {
      const entries = path === undefined ? undefined : getPath(body, path);
      if (!Array.isArray(entries)) continue;
      for (const entry of entries) {
        if (!isRecord(entry)) continue;
        this.historyEntry(entry, `${seenIn} history`);
      }
    }
  }

  /** Each field the resource carries, with the profile spelling it was found under; answers field → path. */
  #matchFields(
    resource: Resource,
    body: Record<string, unknown>,
    fields: Array<[FieldKey, boolean]>,
  ): Map<FieldKey, string> {
    const found = new Map<FieldKey, string>();
    for (const [field, required] of fields) {
      const matched = presentSpelling(this.profile, body, field);
      const id = `${resource}:${field}`;
      const finding = this.#fields.get(id) ?? { resource, field, required, tried: this.profile.document.fields[field] };
      if (matched !== undefined) {
        finding.matched ??= matched;
        found.set(field, matched);
      }
      this.#fields.set(id, finding);
    }
    return found;
  }

  /** The keys the profile does not know; one that is probably a field not found yet is added to `found`. */
  #unknownKeys(
    resource: Resource,
    body: Record<string, unknown>,
    fields: Array<[FieldKey, boolean]>,
    found: Map<FieldKey, string>,
  ): void {
    const known = new Set<string>([
      ...FIXED_NAMES[resource],
      ...fields.flatMap(([field]) => this.profile.document.fields[field].map((p) => p.split('.')[0]!)),
    ]);
    if (resource === 'quote' || resource === 'shipment') known.add(this.profile.document.requests.paymentModeField);

    for (const [key, value] of Object.entries(body)) {
      if (known.has(key)) continue;
      const free = fields.filter(([field]) => !found.has(field)).map(([field]) => field);
      const guessed = free.find((field) => FIELD_GUESSES[field].name.test(key) && FIELD_GUESSES[field].value(value));
      const id = `${resource}:${key}`;
      if (!this.#unknown.has(id)) {
        this.#unknown.set(id, {
          resource,
          key,
          example: example(value),
          ...(guessed ? { guess: { field: guessed, why: FIELD_GUESSES[guessed].why } } : {}),
        });
      }
      if (guessed) {
        found.set(guessed, key);
        const finding = this.#fields.get(`${resource}:${guessed}`);
        if (finding && finding.matched === undefined) finding.guessed ??= key;
      }
    }
  }

  historyEntry(entry: Record<string, unknown>, seenIn: string): void {
    const state =
      typeof entry.status === 'string' ? entry.status : typeof entry.state === 'string' ? entry.state : undefined;
    if (state !== undefined) this.state(state, seenIn);
    for (const [key, value] of Object.entries(entry)) {
      const id = `status history entry:${key}`;
      if (FIXED_NAMES['status history entry'].includes(key) || this.#unknown.has(id)) continue;
      this.#unknown.set(id, { resource: 'status history entry', key, example: example(value) });
    }
  }

  state(state: string, seenIn: string): void {
    const finding =
      this.#states.get(state) ??
      (() => {
        const step = this.profile.stepOf(state);
        const guess = step === undefined ? guessStep(state) : undefined;
        return { state, seenIn: [], ...(step ? { step } : {}), ...(guess ? { guess } : {}) } as StateFinding;
      })();
    if (!finding.seenIn.includes(seenIn)) finding.seenIn.push(seenIn);
    this.#states.set(state, finding);
  }

  result(): Pick<Analysis, 'fields' | 'unknownKeys' | 'states'> {
    return {
      fields: [...this.#fields.values()],
      unknownKeys: [...this.#unknown.values()],
      states: [...this.#states.values()],
    };
  }
}
