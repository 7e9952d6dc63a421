/** The `tscuda` executable's entry (bin/tscuda.js imports it): runs the CLI with the process's arguments. */
import { main } from './cli.js';
import { ignoreClosedPipe } from './closed-pipe.js';
import { exitAfterStop } from './exit-after-stop.js';

// Output piped into a reader that stops early (`| head`, `| true`): the command ends with its own code, no stack trace.
ignoreClosedPipe(process.stdout);
ignoreClosedPipe(process.stderr);
const code = await main(process.argv.slice(2));
process.exitCode = code;
// The command is done and has reported: nothing left open (a client of a lost Redis reconnecting on
// timers) keeps the process past a short grace.
exitAfterStop(code, (line) => console.error(`tscuda: ${line}`));
