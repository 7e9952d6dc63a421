/** The `tscuda` executable's entry (bin/tscuda.js imports it): runs the CLI with the process's arguments. */
import { main } from './cli.js';

process.exitCode = await main(process.argv.slice(2));
