/**
 * How a command answers, in one place: text for a person, or with `--json` exactly one JSON object
 * on stdout (`{"ok": true, ...}` or `{"ok": false, "error": {"name", "message"}}`) for a script, on
 * every command. Under --json the human lines go to stderr, so stdout carries only JSON.
 */

/** Whether the arguments ask for JSON: `--json`, or `--json=...` (itself a mistake, reported in JSON). */
export function jsonAsked(args: readonly string[]): boolean {
  return args.some((a) => a === '--json' || a.startsWith('--json='));
}

/** `text` on one line: a failure is one line on stderr, and a JSON message has no newline either. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

/** The answer of one command run: its lines, its notes, its result or its failure. */
export class CommandReport {
  readonly #prefix: string;

  /** `command` names the command in lines (`tscuda <command>: ...`); `json` is whether --json was given. */
  constructor(
    readonly command: string | undefined,
    readonly json: boolean,
  ) {
    this.#prefix = command === undefined ? 'tscuda: ' : `tscuda ${command}: `;
  }

  /** A line of the human report: stdout, or stderr under --json (stdout then carries only the JSON answer). */
  say(line: string): void {
    (this.json ? process.stderr : process.stdout).write(`${line}\n`);
  }

  /** A note about the run (stderr in both modes), prefixed with the command. */
  note(message: string): void {
    process.stderr.write(`${this.#prefix}${message}\n`);
  }

  /**
   * The command failed: `tscuda <command>: message` on stderr, or under --json one JSON object on
   * stdout. A message that already starts with the prefix (gpuUnavailableLine's) is not prefixed
   * twice. Returns `code`, the exit status.
   */
  fail(message: string, code: number = 1, name: string = 'Error'): number {
    const text = oneLine(message.startsWith(this.#prefix) ? message.slice(this.#prefix.length) : message);
    if (this.json) process.stdout.write(`${JSON.stringify({ ok: false, error: { name, message: text } })}\n`);
    else process.stderr.write(`${this.#prefix}${text}\n`);
    return code;
  }

  /** The command's result under --json: `{"ok": true, ...value}` on stdout; nothing without --json. */
  result(value: Record<string, unknown>): void {
    if (this.json) process.stdout.write(`${JSON.stringify({ ok: true, ...value })}\n`);
  }
}
