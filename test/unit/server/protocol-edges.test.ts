// The supervisor's protocol constants against what docs/serving.md documents (exit codes, the
// default drain bound, the configuration variable in docs/troubleshooting.md), and the message
// guard on every shape that crosses node:cluster IPC.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_ENV,
  DEFAULT_DRAIN_MS,
  EXIT_CODES,
  isProtocolMessage,
} from '../../../src/server/supervision/protocol.js';

const doc = (name: string): string => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

describe('supervision protocol', { timeout: 5_000 }, () => {
  it('exits with the codes the lifecycle table of docs/serving.md lists', () => {
    const table = Object.fromEntries(
      [...doc('serving.md').matchAll(/^\| (\d) \| ([^|]+) \|$/gm)].map((m) => [m[2]!.trim(), Number(m[1])]),
    );
    expect(table).toEqual({
      'stopped; the drain completed (every accepted request answered)': EXIT_CODES.drained,
      'a worker could not start (one line says why)': EXIT_CODES.failed,
      'bad usage (one line says which option)': EXIT_CODES.usage,
      'stopped, but the drain was cut (its bound passed, or a second signal)': EXIT_CODES.drainCut,
    });
    expect(EXIT_CODES).toEqual({ drained: 0, failed: 1, usage: 2, drainCut: 3 });
  });

  it('bounds a drain by the documented default of --drain', () => {
    expect(doc('serving.md')).toContain(`| \`--drain MS\` | ${DEFAULT_DRAIN_MS} |`);
    expect(DEFAULT_DRAIN_MS).toBe(10_000);
  });

  it('configures workers through the variable docs/troubleshooting.md names', () => {
    expect(CONFIG_ENV).toBe('TSCUDA_SERVE_CONFIG');
    expect(doc('troubleshooting.md')).toContain(`\`${CONFIG_ENV}\``);
  });

  it('recognizes an object with a string tscuda tag, and nothing else', () => {
    for (const message of [
      { tscuda: 'retire' },
      { tscuda: 'job-query', requestId: 1, op: 'get', id: 'w1-a', target: 1 },
      { tscuda: '' },
      Object.assign([], { tscuda: 'x' }),
    ])
      expect(isProtocolMessage(message), JSON.stringify(message)).toBe(true);
    for (const message of [
      null,
      undefined,
      'retire',
      7,
      { tscuda: 1 },
      { tscuda: null },
      { type: 'retire' },
      {},
      () => undefined,
    ])
      expect(isProtocolMessage(message), String(message)).toBe(false);
  });
});
