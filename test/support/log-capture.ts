/**
 * A logger whose lines a test can read back: to show that no secret, address or phone reaches the logs.
 */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';

export function capturingLogger(level = 'debug'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}
