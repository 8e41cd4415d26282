/**
 * Scripted failures for chaos tests. Each fault answers the next `times` matching GraphQL requests:
 *  - `throttle`: a THROTTLED answer (with real cost figures) whatever the bucket holds;
 *  - `status`: an HTTP error (500, 502, 503, 429...) with Shopify's JSON error body and, for 429 and 503,
 *    a Retry-After header;
 *  - `delay`: the request is held `delayMs` before being answered normally (for client timeouts).
 * One request consumes at most one fault.
 * `operation` restricts a fault to requests whose root fields include it (e.g. "fulfillmentCreate"; "rest"
 * for the REST order reads, where `throttle` means a 429), `domain` to one shop. Faults are consumed in
 * the order they were added.
 */
export interface FaultSpec {
  kind: 'throttle' | 'status' | 'delay';
  /** For `status`: the HTTP status to answer with (default 500). */
  status?: number;
  /** How many matching requests it affects (default 1). */
  times?: number;
  operation?: string;
  domain?: string;
  /** For `delay`. */
  delayMs?: number;
  /** For `status`: the Retry-After header, in seconds. */
  retryAfterSeconds?: number;
}

export interface ActiveFault extends Required<Pick<FaultSpec, 'kind' | 'times'>> {
  id: number;
  spec: FaultSpec;
}

export class FaultPlan {
  private faults: ActiveFault[] = [];
  private nextId = 1;

  add(spec: FaultSpec): number {
    const times = spec.times ?? 1;
    if (!Number.isInteger(times) || times < 1)
      throw new Error(`fault times must be a positive integer, got ${String(spec.times)}`);
    if (spec.kind === 'status' && spec.status !== undefined && (spec.status < 400 || spec.status > 599)) {
      throw new Error(`fault status must be 4xx or 5xx, got ${spec.status}`);
    }
    const id = this.nextId++;
    this.faults.push({ id, kind: spec.kind, times, spec });
    return id;
  }

  clear(): void {
    this.faults = [];
  }

  /** Faults not used up yet. */
  pending(): ActiveFault[] {
    return this.faults.map((fault) => ({ ...fault }));
  }

  /** Uses one occurrence of the first fault (in the order they were added) matching this request, if any. */
  take(domain: string, rootFields: string[]): FaultSpec | undefined {
    const fault = this.faults.find(
      (candidate) =>
        (candidate.spec.domain === undefined || candidate.spec.domain === domain) &&
        (candidate.spec.operation === undefined || rootFields.includes(candidate.spec.operation)),
    );
    if (!fault) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) this.faults = this.faults.filter((candidate) => candidate !== fault);
    return fault.spec;
  }
}
