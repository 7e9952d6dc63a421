/**
 * A reader that goes away (`tscuda info | head -1`, `tscuda --help | true`) is no failure of the
 * command: Node ignores SIGPIPE, so the write's EPIPE arrives as an 'error' event, and without a
 * listener it ended the process with a 27-line stack trace. The executable listens here: an EPIPE
 * is dropped (later writes to the closed pipe go nowhere) and the command ends with its own exit
 * code, as other command-line tools do; any other stream error is still thrown.
 */

/** Ends quietly on a closed pipe from now on: `stream`'s EPIPE errors are ignored. */
export function ignoreClosedPipe(stream: NodeJS.WritableStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}
