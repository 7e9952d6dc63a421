/**
 * A `tscuda serve` worker over the simulated engine (bench/queue/sim-engine.ts), for the serve
 * bench's `--sim` mode: the server's HTTP path runs for real (fastify, body readers, shedding,
 * codec, metrics) while the GPU is simulated, so the server's cost per request can be measured
 * and profiled against the bare HTTP floor on a host without a GPU. The simulated GPU is as fast
 * as an H100 in process (0.085 ns per sample, the STFT job's 11.7 Gsamples/s), so it is not what
 * bounds a row. As with the real engine, the samples and the filtered wave make no host copy (the
 * server's pooled bodies and answers are the engine's pinned memory, which the GPU reads and
 * writes); the small results are fresh arrays, as the real engine's copy-back makes them; and the
 * door leaves the NaN search to the engine, as it does for JobEngine's search on the GPU.
 */
import { runWorker } from '../../src/server/supervision/worker.js'; // private-path: a serve worker with a simulated engine, the same entry tscuda serve's workers run
import { SimEngine } from '../queue/sim-engine.js';

await runWorker({
  build: async (config) => ({
    engine: new SimEngine({
      nsPerSample: 0.085,
      fixedUs: 20,
      lanes: config.lanes ?? 4,
      label: 'sim',
      hostCopies: false,
      // As JobEngine: the samples are searched for NaN on the device, so the door does not scan them.
      checksSamples: true,
    }),
  }),
});
