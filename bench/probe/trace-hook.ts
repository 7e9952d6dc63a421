/**
 * A tracing hook for bench/probe/queue-latency.ts, loaded with `--import` into a process of the
 * queue (client or worker): every ioredis command and every BlobChannel command is recorded with
 * its connection's name and its send and reply times (epoch ms, sub-ms precision, comparable across
 * processes of one host), and written to `$TSCUDA_TRACE_DIR/trace-<pid>.jsonl` at exit.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
// private-path: the blob stores' raw command channel, patched to time each command it sends
import { BlobChannel } from '../../src/queue/blob-channel.js';

/** One traced command. */
export interface TraceEvent {
  pid: number;
  conn: string;
  cmd: string;
  /** First argument after the command (a key, or a script's name for EVALSHA). */
  arg: string;
  sent: number;
  replied: number;
}

const events: TraceEvent[] = [];
/** Epoch ms with sub-ms precision. */
export const now = (): number => performance.timeOrigin + performance.now();
/** Marks of the process's own (e.g. a client's submit start), kept with the commands. */
export function mark(name: string, arg = ''): void {
  const t = now();
  events.push({ pid: process.pid, conn: 'mark', cmd: name, arg, sent: t, replied: t });
}
const scriptNames = new Map<string, string>();

type Cmd = { name: string; args: unknown[]; promise: Promise<unknown> };
const proto = Redis.prototype as unknown as {
  sendCommand(c: Cmd, s?: unknown): unknown;
  options: { connectionName?: string };
  scriptsSet?: Record<string, { sha: string }>;
};
const originalSend = proto.sendCommand;
proto.sendCommand = function (this: typeof proto, command: Cmd, stream?: unknown) {
  const sent = now();
  const result = originalSend.call(this, command, stream);
  let arg = String(command.args[0] ?? '');
  if (command.name === 'evalsha') {
    if (!scriptNames.has(arg))
      for (const [name, s] of Object.entries(this.scriptsSet ?? {})) scriptNames.set(s.sha, name);
    arg = scriptNames.get(arg) ?? arg;
  }
  const ev: TraceEvent = {
    pid: process.pid,
    conn: String(this.options.connectionName ?? '?').replace(/^.*:/, ''),
    cmd: command.name,
    arg: arg.slice(-40),
    sent,
    replied: NaN,
  };
  events.push(ev);
  command.promise.then(
    (reply) => {
      ev.replied = now();
      if (command.name === 'bzpopmin') ev.arg = `${String(command.args[1])} -> ${JSON.stringify(reply)}`;
    },
    () => (ev.replied = now()),
  );
  return result;
};
const channelProto = BlobChannel.prototype as unknown as { send(args: unknown[], into?: unknown): Promise<unknown> };
const originalChannelSend = channelProto.send;
channelProto.send = function (this: unknown, args: unknown[], into?: unknown) {
  const ev: TraceEvent = {
    pid: process.pid,
    conn: 'blob',
    cmd: String(args[0]),
    arg: String(args[1]).slice(-40),
    sent: now(),
    replied: NaN,
  };
  events.push(ev);
  const p = originalChannelSend.call(this, args, into);
  p.then(
    () => (ev.replied = now()),
    () => (ev.replied = now()),
  );
  return p;
};

process.on('exit', () => {
  const dir = process.env.TSCUDA_TRACE_DIR;
  if (dir !== undefined)
    writeFileSync(join(dir, `trace-${process.pid}.jsonl`), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
});
