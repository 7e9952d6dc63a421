/** The primary's one way of sending a worker a message of the supervision protocol. */
import type { Worker } from 'node:cluster';
import type { PrimaryMessage } from './protocol.js';

/**
 * Sends `message` to `worker` if it is still connected. A worker may leave between the check and
 * the write: the failed send is its exit's business, not an error here.
 */
export function post(worker: Worker, message: PrimaryMessage): void {
  if (worker.isConnected()) worker.send(message, () => undefined);
}
