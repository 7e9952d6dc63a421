/**
 * One line naming why a serving process could not start: the address it could not listen on
 * and the system's reason in words, or the engine that could not be built. The primary prints
 * it once and exits 1 (a process manager then sees a failed start, not a healthy server that
 * serves nothing).
 */

const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use (another process listens there)',
  EADDRNOTAVAIL: 'that address is not one of this machine’s (see --host)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  ENOTFOUND: 'the host name does not resolve (see --host)',
  EAI_AGAIN: 'the host name could not be resolved now (see --host)',
};

/** The one-line reason of a failed listen on host:port. */
export function listenFailure(error: unknown, host: string, port: number): string {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const reason =
    typeof code === 'string'
      ? `${LISTEN_REASONS[code] ?? (error as Error).message} (${code})`
      : error instanceof Error
        ? error.message
        : String(error);
  return `cannot listen on ${where}: ${reason}`;
}

/** The one-line reason of an engine that could not be built. */
export function buildFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `the GPU engine could not be built: ${message.split('\n')[0]}`;
}
