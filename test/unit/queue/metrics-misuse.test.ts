/**
 * registerQueueMetrics() misused, without a Redis (the sources are stand-ins). Found by probing:
 * a label prom-client refuses (`le`) was refused only after two or three series were registered,
 * so the corrected call then failed as a duplicate; labels named like the queue's own (`state`,
 * `outcome`) silently overwrote them; a null source failed with "Cannot use 'in' operator".
 */
import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerQueueMetrics, type QueueMetricsSource } from '../../../src/queue/index.js';

/** A stand-in for a QueueWorker: what the metrics read of one. */
const workerLike = (): QueueMetricsSource =>
  Object.assign(new EventEmitter(), {
    reachable: true,
    queueCounts: async () => ({ waiting: 1, prioritized: 0, delayed: 0, active: 0, completed: 0, failed: 0 }),
  }) as unknown as QueueMetricsSource;

const names = (registry: Registry): string[] => registry.getMetricsAsArray().map((m) => m.name);

describe('registerQueueMetrics misused', () => {
  it('a refused label registers nothing, and the corrected call then works', async () => {
    const registry = new Registry();
    expect(() => registerQueueMetrics(registry, workerLike(), { le: 'gpu-1' })).toThrow(
      /^registerQueueMetrics labels\.le: the queue's own series use this label/,
    );
    expect(names(registry)).toEqual([]);
    registerQueueMetrics(registry, workerLike(), { host: 'gpu-1' });
    expect(names(registry)).toEqual([
      'tscuda_queue_depth',
      'tscuda_queue_reachable',
      'tscuda_queue_jobs_total',
      'tscuda_queue_wait_seconds',
    ]);
    expect(await registry.metrics()).toContain('tscuda_queue_depth{host="gpu-1",state="waiting"} 1');
  }, 5000);

  it.each([
    ['the label state', { state: 'mine' }, /labels\.state: the queue's own series use this label/],
    ['the label outcome', { outcome: 'mine' }, /labels\.outcome: the queue's own series use this label/],
    ['a label name Prometheus refuses', { 'gpu-host': 'x' }, /labels\["gpu-host"\]: not a Prometheus label name/],
    ['a reserved label name', { __name: 'x' }, /labels\["__name"\]: not a Prometheus label name/],
    ['a label value that is not a string', { host: 1 }, /labels\.host must be a string, got 1/],
    ['labels that are not an object', 'host', /labels must be an object of label names to strings, got "host"/],
  ])(
    'refuses %s, registering nothing',
    (_label, labels, message) => {
      const registry = new Registry();
      expect(() => registerQueueMetrics(registry, workerLike(), labels as never)).toThrow(message);
      expect(names(registry)).toEqual([]);
    },
    5000,
  );

  it('refuses a source or a registry of the wrong kind, and a second registration, naming them', () => {
    const registry = new Registry();
    expect(() => registerQueueMetrics(registry, null as never)).toThrow(
      new TypeError('registerQueueMetrics source must be a JobQueue or a QueueWorker, got null'),
    );
    expect(() => registerQueueMetrics(registry, {} as never)).toThrow(
      /source must be a JobQueue or a QueueWorker, got an object/,
    );
    expect(() => registerQueueMetrics({} as never, workerLike())).toThrow(
      /registry must be a prom-client Registry, got an object/,
    );
    expect(names(registry)).toEqual([]);
    registerQueueMetrics(registry, workerLike());
    expect(() => registerQueueMetrics(registry, workerLike())).toThrow(/the registry already holds tscuda_queue_depth/);
    expect(names(registry)).toHaveLength(4);
  }, 5000);
});
