/**
 * The serve bench's fault run: supervised workers with the bench-only fault stage, a fault
 * injected every few seconds under a closed loop of 32 clients; every request answered, each
 * lost worker replaced (recovery from the faulting request to the replacement listening).
 */
import { Agent } from 'node:http';
import { closedLoop, send, type LoopReport } from './load.js';
import { RPS_MIX, stftRequest } from './mixes.js';
import { startFaultService, waitReady, type Service } from './services.js';

/** How the fault run runs. */
export interface FaultOptions {
  root: string;
  port: number;
  workers: number;
  standby: number;
  durationS: number;
  quick: boolean;
  verbose: boolean;
  log(line: string): void;
  notes: string[];
}

/** What the fault run measured (null fields: not run). */
export interface FaultOutcome {
  fault: Record<string, unknown> | null;
  /** Requests without a response, the injected ones included. */
  unanswered: number | null;
  /** The worst fault's recovery, s (null when one was not matched by a loss and a replacement). */
  recoveryS: number | null;
}

/** Runs the fault run. */
export async function runFault(o: FaultOptions): Promise<FaultOutcome> {
  let fault: Record<string, unknown> | null = null;
  let unanswered: number | null = null;
  let recoveryS: number | null = null;
  const port = o.port;
  const svc: Service = startFaultService(o.root, port, o.workers, o.verbose, o.standby);
  if ((await waitReady(svc.base, 90_000, svc.child)).ready) {
    const everyS = o.quick ? 4 : 5;
    const faultReq = stftRequest(svc.base, RPS_MIX, '&flags=stft,fault');
    const faultAgent = new Agent({ keepAlive: false });
    const injected: { at: number; status: number; error?: string }[] = [];
    const lostCount = (): number => svc.lines.filter((l) => l.text.includes('lost its GPU context')).length;
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    const t0 = performance.now();
    // Every `everyS`, one request with the fault stage; resent while it only met a worker that is
    // already leaving (a 503 without a new loss in the supervisor's log).
    const injector = (async () => {
      await sleep(1500);
      while ((performance.now() - t0) / 1000 < o.durationS - 3) {
        const before = lostCount();
        const at = performance.now();
        const r = await send(faultReq, faultAgent);
        await sleep(500);
        if (lostCount() > before || r.status === 0) {
          injected.push({ at, status: r.status, ...(r.error === undefined ? {} : { error: r.error }) });
          await sleep(everyS * 1000 - 500);
        } else await sleep(200);
      }
    })();
    const report = await closedLoop(stftRequest(svc.base, RPS_MIX), 32, o.durationS, { backoffMs: 20 });
    await injector;
    // Recovery of each fault: from the faulting request to its replacement listening, then ready.
    const lostLines = svc.lines.filter((l) => l.text.includes('lost its GPU context'));
    const listenLines = svc.lines.filter((l) => l.text.includes('listening on'));
    const recoveries = injected
      .sort((a, b) => a.at - b.at)
      .map((f) => {
        const lostAt = lostLines.find((l) => l.at >= f.at);
        const back = lostAt === undefined ? undefined : listenLines.find((l) => l.at >= lostAt.at);
        return back === undefined ? null : (back.at - f.at) / 1000;
      });
    const finalReady = await waitReady(svc.base, 10_000, svc.child);
    const exit = await svc.stop();
    unanswered =
      Object.values(report.unanswered).reduce((a, b) => a + b, 0) + injected.filter((f) => f.status === 0).length;

    const measured = recoveries.filter((r): r is number => r !== null);
    recoveryS = measured.length === recoveries.length && measured.length > 0 ? Math.max(...measured) : null;
    fault = {
      workers: o.workers,
      durationS: o.durationS,
      clients: 32,
      faults: injected.length,
      faultResponses: injected.map((f) => f.status),
      contextsLost: lostLines.length,
      recoveriesS: recoveries,
      load: report,
      readyAtEnd: finalReady.ready,
      exitCode: exit,
    };
    o.log(
      `fault run: ${injected.length} faults, ${lostLines.length} contexts lost, recoveries ${JSON.stringify(recoveries.map((r) => r?.toFixed(2)))} s, responses ${JSON.stringify(report.byStatus)}, unanswered ${JSON.stringify(report.unanswered)}`,
    );
    if (recoveryS === null)
      o.notes.push('fault run: a fault without a matching loss and replacement in the supervisor log');
  } else {
    o.notes.push('fault service did not become ready');
    await svc.stop();
  }

  return { fault, unanswered, recoveryS };
}

/** The fault run as Markdown. */
export function faultMarkdown(fault: Record<string, unknown>): string[] {
  return [
    '## Fault run',
    '',
    `${String(fault.workers)} workers, ${String(fault.durationS)} s, 32 clients, ${String(fault.faults)} faults injected (${String(fault.contextsLost)} contexts lost); recovery per fault ${JSON.stringify(fault.recoveriesS)} s; responses ${JSON.stringify((fault.load as LoopReport).byStatus)}; without a response ${JSON.stringify((fault.load as LoopReport).unanswered)}; 503 not marked retryable: ${(fault.load as LoopReport).nonRetryable503}; ready at the end: ${String(fault.readyAtEnd)}; exit code ${String(fault.exitCode)}.`,
    '',
  ];
}
