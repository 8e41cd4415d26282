/**
 * The queues page: bull-board over every Relais queue, READ-ONLY. It sits behind the dashboard's
 * authentication (the router mounts it after the auth check). Job data holds shop ids and, for shop
 * events, the shop's order payload (personal data, never a credential: see src/orders/queues.ts), so
 * nothing secret is shown.
 *
 * Read-only because adding or retrying a job from here would put work into the pipeline that no shop
 * signed (a shop event added by hand becomes a shipment). Operators replay held orders through the
 * dashboard's own forms or `relais replay`, which go through the ledger's checks.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { RequestHandler } from 'express';

export const QUEUES_BASE_PATH = '/dashboard/queues';

export function queuesBoard(queues: readonly Queue[]): RequestHandler {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUES_BASE_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'Relais queues',
        hideDocsLink: true,
        miscLinks: [{ text: 'Back to the dashboard', url: '/dashboard/orders' }],
      },
    },
  });
  return serverAdapter.getRouter() as RequestHandler;
}

/**
 * Read-only: bull-board's API adds, retries, promotes, removes, pauses and cleans jobs with POST, PUT and
 * DELETE. None of it is allowed here, whoever asks; mounted in front of the board.
 */
export const refuseWrites: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') {
    next();
    return;
  }
  res
    .status(405)
    .set('Allow', 'GET, HEAD')
    .type('text/plain')
    .send('the queues board is read-only: replay held orders from the dashboard or with relais replay\n');
};
