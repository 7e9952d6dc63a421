/** The `tscuda` executable's entry (bin/tscuda.js imports it): runs the CLI with the process's arguments. */
import { main } from './cli.js';
import { ignoreClosedPipe } from './closed-pipe.js';

// Output piped into a reader that stops early (`| head`, `| true`): the command ends with its own code, no stack trace.
ignoreClosedPipe(process.stdout);
ignoreClosedPipe(process.stderr);
process.exitCode = await main(process.argv.slice(2));
