import { describe, expect, it } from 'vitest';
import {
  TURN_FLOOD_ARRIVALS,
  TurnBudget,
  FIRST_FLOOD_ARRIVALS,
  turnLimit,
  type TurnClock,
} from '../../../src/server/shedding/turn-budget.js';

/** A clock the test moves by hand, with the end-of-turn callbacks it was given kept until endTurn(). */
function manualClock(): TurnClock & { t: number; endTurn(): void; scheduled(): number } {
  let queued: (() => void)[] = [];
  return {
    t: 1000,
    now() {
      return this.t;
    },
    afterTurn(callback) {
      queued.push(callback);
    },
    endTurn() {
      const run = queued;
      queued = [];
      for (const c of run) c();
    },
    scheduled: () => queued.length,
  };
}

describe('TurnBudget', () => {
  it('refuses the requests a turn reads once it has run past the budget, with a flood of arrivals in it', () => {
    const clock = manualClock();
    const budget = new TurnBudget(25, clock);
    const verdicts: boolean[] = [];
    // 40 requests read in one turn, 1 ms of loop work each.
    for (let i = 0; i < 40; i++) {
      verdicts.push(budget.overBudget());
      clock.t += 1;
    }
    // Request i is read i ms into the turn: refused from the first one past 25 ms that is also past 16 arrivals.
    const firstRefused = verdicts.indexOf(true);
    expect(firstRefused).toBe(26);
    expect(verdicts.slice(firstRefused).every((v) => v)).toBe(true);
    expect(budget.elapsedMs).toBe(40);
  });

  it('never refuses the first TURN_FLOOD_ARRIVALS requests of a turn, however long it runs (one client’s heavy requests)', () => {
    const clock = manualClock();
    const budget = new TurnBudget(5, clock);
    for (let i = 0; i < TURN_FLOOD_ARRIVALS; i++) {
      expect(budget.overBudget()).toBe(false);
      clock.t += 100;
    }
    expect(budget.overBudget()).toBe(true);
  });

  it('a new turn starts at the end-of-turn mark: the next turn is measured from there, not from the flood’s start', () => {
    const clock = manualClock();
    const budget = new TurnBudget(25, clock);
    for (let i = 0; i < 30; i++) budget.overBudget();
    clock.t += 100;
    expect(budget.overBudget()).toBe(true);
    clock.endTurn(); // the check phase after the long turn
    clock.t += 2;
    for (let i = 0; i < 30; i++) expect(budget.overBudget()).toBe(false);
    expect(budget.elapsedMs).toBe(2);
  });

  it('an idle loop has nothing scheduled: the mark stops once a turn reads no request, and the next request starts a fresh turn', () => {
    const clock = manualClock();
    const budget = new TurnBudget(25, clock);
    budget.overBudget();
    expect(clock.scheduled()).toBe(1);
    clock.endTurn(); // a request came in that turn: the mark is scheduled again
    expect(clock.scheduled()).toBe(1);
    clock.endTurn(); // none came: nothing stays scheduled
    expect(clock.scheduled()).toBe(0);
    expect(budget.elapsedMs).toBe(0);
    // Long after, a burst: measured from its own first request, however long the loop idled.
    clock.t += 10_000;
    for (let i = 0; i < 30; i++) expect(budget.overBudget()).toBe(false);
  });

  it('rejects a budget that is not a positive finite number of ms', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '25' as unknown as number])
      expect(() => new TurnBudget(bad)).toThrow(/budgetMs must be a positive number of ms/);
  });

  it('a per-call budget overrides the constructor’s', () => {
    const clock = manualClock();
    const budget = new TurnBudget(25, clock);
    for (let i = 0; i < 20; i++) budget.overBudget();
    clock.t += 30;
    expect(budget.overBudget(50)).toBe(false);
    expect(budget.overBudget()).toBe(true);
    clock.t += 30;
    expect(budget.overBudget(50)).toBe(true);
  });
});

describe('turnLimit', () => {
  it('is maxTurnMs past 16 arrivals under a flood (or with adaptive admission off), and before one the larger of it and maxEventLoopDelayMs past 64', () => {
    expect(turnLimit({ maxTurnMs: 25, maxEventLoopDelayMs: 50 }, true)).toEqual({
      ms: 25,
      arrivals: TURN_FLOOD_ARRIVALS,
    });
    expect(turnLimit({ maxTurnMs: 25, maxEventLoopDelayMs: 50 }, false)).toEqual({
      ms: 50,
      arrivals: FIRST_FLOOD_ARRIVALS,
    });
    expect(turnLimit({ maxTurnMs: 80, maxEventLoopDelayMs: 50 }, false)).toEqual({ ms: 80, arrivals: 64 });
    expect(turnLimit({ maxTurnMs: 25, maxEventLoopDelayMs: 0 }, false)).toEqual({ ms: 25, arrivals: 16 });
  });

  it('a per-call arrival count overrides the flood threshold', () => {
    const clock = manualClock();
    const budget = new TurnBudget(25, clock);
    for (let i = 0; i < 64; i++) budget.overBudget(10, 64);
    clock.t += 30;
    expect(budget.overBudget(10, 64)).toBe(true);
    expect(budget.overBudget(10, 100)).toBe(false);
  });
});
