/** The worker process of `tscuda serve --workers N` (started by the supervisor through node:cluster). */
import { buildPartsOrNone } from './gpu-parts.js';
import { runWorker } from './worker.js';

await runWorker({ build: buildPartsOrNone });
