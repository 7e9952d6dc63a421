/** `npm run bench`: see bench/run.ts and `npm run bench -- --help`. */
import { runBench } from './run.js';

process.exitCode = await runBench(process.argv.slice(2));
