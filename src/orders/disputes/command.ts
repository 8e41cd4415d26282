/**
 * `relais dispute open <externalOrderId> --reason … --description … --claimant-id … [--claimant-type seller]`
 * and `relais dispute list <externalOrderId> [--json]`: the commands' work, apart from commander.
 * Exit codes: 0 done, 1 refused or failed (the reason is printed), 75 (EX_TEMPFAIL) when the service is unavailable.
 */
import { listDisputesForOrder, openDisputeForOrder, type DisputeRuntime, type DisputeView } from './disputes.js';

interface Output {
  write(text: string): boolean;
}

export interface OpenDisputeCommandOptions {
  reason: string;
  description: string;
  claimantId: string;
  claimantType?: string;
  json?: boolean;
}

const EX_TEMPFAIL = 75;

function describeClaim(claim: DisputeView): string {
  const decided =
    claim.status.toUpperCase() === 'OPEN'
      ? 'open: the settlement is held until it is decided'
      : `${claim.status}${claim.decidedAt ? ` on ${claim.decidedAt}` : ''}: ${claim.outcome ?? 'no outcome given'}`;
  return `${claim.claimId ?? '(no id)'}  ${claim.reason}  by ${claim.claimantId ?? '?'} (${claim.claimantType ?? 'seller'})  ${claim.createdAt ?? ''}\n    ${decided}`;
}

export async function runDisputeOpen(
  runtime: DisputeRuntime,
  externalOrderId: string,
  options: OpenDisputeCommandOptions,
  io: { stdout: Output; stderr: Output },
): Promise<number> {
  const result = await openDisputeForOrder(runtime, externalOrderId, {
    reason: options.reason,
    description: options.description,
    claimantId: options.claimantId,
    ...(options.claimantType === undefined ? {} : { claimantType: options.claimantType }),
  });
  if (!result.ok) {
    io.stderr.write(`dispute not opened for ${externalOrderId}: ${result.why}\n`);
    return result.retryable ? EX_TEMPFAIL : 1;
  }
  io.stdout.write(
    options.json
      ? `${JSON.stringify(result, null, 2)}\n`
      : `opened on shipment ${result.shipmentId}:\n${describeClaim(result.claim)}\n`,
  );
  return 0;
}

export async function runDisputeList(
  runtime: DisputeRuntime,
  externalOrderId: string,
  options: { json?: boolean },
  io: { stdout: Output; stderr: Output },
): Promise<number> {
  const result = await listDisputesForOrder(runtime, externalOrderId);
  if (!result.ok) {
    io.stderr.write(`cannot list the disputes of ${externalOrderId}: ${result.why}\n`);
    return result.retryable ? EX_TEMPFAIL : 1;
  }
  if (options.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (result.claims.length === 0) io.stdout.write(`no dispute on shipment ${result.shipmentId}\n`);
  else io.stdout.write(`shipment ${result.shipmentId}:\n${result.claims.map(describeClaim).join('\n')}\n`);
  return 0;
}
