/**
 * The serving guide's Embed block, run as written (through tsx, `tscuda/*` resolved to the
 * sources) on a machine without a GPU: it must reach the server, not throw at `new JobEngine()`;
 * the server then says why it is not ready.
 */
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { extractSnippets, subpathSources, writeSnippetProject } from './snippets.js';

const root = join(import.meta.dirname, '..', '..', '..');
const work = mkdtempSync(join(tmpdir(), 'tscuda-embed-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.runIf(!isLibraryAvailable('driver'))('docs/serving.md, Embed, without a GPU', () => {
  it('starts the server; ready is 503 with the reason; close() ends it', { timeout: 60_000 }, async () => {
    const embed = extractSnippets(readFileSync(join(root, 'docs', 'serving.md'), 'utf8'), 'docs/serving.md').find((s) =>
      s.code.includes('createServer('),
    );
    expect(embed, 'the Embed block').toBeDefined();
    // The block as written, on a free port, then one request and a clean close.
    const code = `${embed!.code.replace('port: 8000', 'port: 0').replace("host: '0.0.0.0'", "host: '127.0.0.1'")}
const ready = await server.app.inject({ method: 'GET', url: '/v2/health/ready' });
process.stderr.write(\`READY \${ready.statusCode} \${ready.body}\\n\`);
await server.close();
`;
    writeSnippetProject(root, work, [{ file: 'docs/serving.md', line: embed!.line, code }], subpathSources(root));
    const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
    const r = await execa('node', [tsx, '--tsconfig', join(work, 'tsconfig.json'), join(work, 'snippet-0.ts')], {
      cwd: work,
      reject: false,
      timeout: 50_000,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/READY 503 .*no NVIDIA driver: libcuda\.so\.1 was not found/);
  });
});
