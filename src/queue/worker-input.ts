/**
 * How a worker reads a job's samples. A client sends small samples alongside the job's add
 * rather than before it (one round trip fewer in a row: job-queue.ts), on another connection and
 * maybe to another Redis, so a worker that takes the job at once may ask before they land. For
 * such a job, missing samples mean "not yet": the worker reads again with a short backoff for up
 * to INPUT_ARRIVAL_WAIT_MS. Then it decides with the client through the key itself: it leaves
 * INPUT_GIVEN_UP there only where the key is still empty (SET NX), as the client's samples are
 * stored only where it is empty, so exactly one of the two lands: samples first, the job runs;
 * the marker first, the job fails with the reason and the late samples bounce (the client's
 * submit rejects), so a job is never both failed here and accepted there.
 */
import { UnrecoverableError } from 'bullmq';
import type { BlobPool } from './blob-pool.js';
import { wireBytes, type WireJob } from './codec.js';
import { INPUT_ARRIVAL_WAIT_MS, INPUT_GIVEN_UP } from './options.js';

/** Why a job whose samples expired fails. */
const EXPIRED = 'input: the samples are gone (they expired before a worker took the job: inputTtlMs)';

/** Backoff between reads of samples not landed yet, ms: none first (they are usually a fraction of a ms away: the read's own round trip). */
const REREAD_DELAYS_MS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 250];

/** What readInput needs besides the job. */
export interface InputReader {
  blobs: BlobPool;
  /** Memory of exactly `bytes` for the samples (the worker's pool), and its return. */
  take(bytes: number): Buffer;
  release(buffer: Buffer): void;
  /** How long to wait for samples sent alongside their job, ms; default INPUT_ARRIVAL_WAIT_MS. */
  waitMs?: number | undefined;
}

/** Errors after which the job's samples key must stay as it is (it holds INPUT_GIVEN_UP, which late samples must meet). */
export const keepsInputKey = new WeakSet<Error>();

function givenUp(waitedMs: number): Error {
  const error = new UnrecoverableError(
    `input: the samples never arrived (sent alongside the job, they had not landed ${Math.round(waitedMs)} ms after a worker took it: ` +
      'its client stopped or lost its blob store mid-submit, and its submit was refused)',
  );
  keepsInputKey.add(error);
  return error;
}

const isMarker = (buffer: Buffer): boolean =>
  buffer.byteLength === INPUT_GIVEN_UP.length && buffer.toString('latin1') === INPUT_GIVEN_UP;

/**
 * The samples of `data` (job `timestamp`: when its client added it, Date.now() of that host), in
 * memory from `reader.take`; throws UnrecoverableError with the reason when there are none.
 */
export async function readInput(reader: InputReader, data: WireJob, timestamp: number): Promise<Buffer> {
  const { blobs, take, release } = reader;
  const bytes = wireBytes(data.dtype, data.samples);
  const read = async (): Promise<Buffer | 'marker' | null> => {
    const input = await blobs.get(data.inputKey, bytes, take);
    if (input === null || !isMarker(input)) return input;
    release(input);
    return 'marker';
  };
  let input = await read();
  if (input !== null && input !== 'marker') return input;
  if (data.inputAlongside !== true) throw new UnrecoverableError(EXPIRED);
  if (input === 'marker') throw givenUp(0);
  // Within the samples' time-to-live by the job's own clock, missing samples cannot have expired: they are on their way.
  const young = data.inputTtlMs === undefined || Date.now() - timestamp < data.inputTtlMs;
  const waitMs = young ? (reader.waitMs ?? INPUT_ARRIVAL_WAIT_MS) : 0;
  const start = performance.now();
  for (let i = 0; performance.now() - start < waitMs; i++) {
    const delay = Math.min(
      REREAD_DELAYS_MS[Math.min(i, REREAD_DELAYS_MS.length - 1)]!,
      waitMs - (performance.now() - start),
    );
    await new Promise((resolve) => (delay > 0 ? setTimeout(resolve, delay) : setImmediate(resolve)));
    input = await read();
    if (input === 'marker') throw givenUp(performance.now() - start);
    if (input !== null) return input;
  }
  // Decide with the client (see the file's comment); the marker stays as long as a finished job does.
  const ttlMs = Math.max(data.inputTtlMs ?? 0, data.resultTtlMs);
  if (await blobs.setIfAbsent(data.inputKey, Buffer.from(INPUT_GIVEN_UP, 'latin1'), ttlMs)) {
    if (!young) {
      const error = new UnrecoverableError(EXPIRED);
      keepsInputKey.add(error);
      throw error;
    }
    throw givenUp(performance.now() - start);
  }
  // The key was taken first: by the samples, just landed (or by this marker, sent again after a reconnection).
  input = await read();
  if (input !== null && input !== 'marker') return input;
  throw givenUp(performance.now() - start);
}
