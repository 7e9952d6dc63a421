/**
 * Drives one serve bench row against a running server for a CPU profile of its workers
 * (tools/profile-serve.sh): `tsx bench/serve/profile-drive.ts <base> <small|throughput> <concurrency> <seconds>`.
 * Prints the loop's report as one JSON line.
 */
import { closedLoop } from './load.js';
import { RPS_MIX, THROUGHPUT_MIX, stftRequest } from './mixes.js';

const [base, mixName = 'throughput', concurrency = '16', seconds = '8'] = process.argv.slice(2);
if (base === undefined) throw new Error('usage: profile-drive.ts <base> [small|throughput] [concurrency] [seconds]');
const mix = mixName === 'small' ? RPS_MIX : THROUGHPUT_MIX;
const report = await closedLoop(stftRequest(base, mix), Number(concurrency), Number(seconds));
const ok = report.byStatus['200'] ?? 0;
console.log(
  JSON.stringify({
    mix: mixName,
    concurrency: Number(concurrency),
    ok,
    rps: ok / (report.elapsedS ?? Number(seconds)),
    latencyMs: report.latencyMs['200'],
  }),
);
