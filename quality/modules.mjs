// The CUDA-free cores under mutation testing, each with the unit tests that guard it. A core is
// mutated against only these files (not the whole suite) so one module stays within minutes on two
// cores; a test file that guards a core belongs in its list, or its mutants survive here.

/**
 * @typedef {object} MutationModule
 * @property {string} name      short name on the command line and in the summary
 * @property {string} file      the source file mutated
 * @property {string[]} tests   the vitest files run against each mutant
 * @property {boolean} [liftAsConst] remove `as const` from the file for the run: Stryker never mutates
 *   inside a type assertion, so a table declared `[...] as const` would otherwise go untested
 */

/** @type {MutationModule[]} */
export const MUTATION_MODULES = [
  {
    name: 'parameters',
    file: 'src/engine/job-schema.ts',
    tests: [
      'test/unit/engine/parameters-edges.test.ts',
      'test/unit/server/codec-params.test.ts',
      'test/unit/engine/validate.test.ts',
      'test/unit/engine/job-schema.test.ts',
      'test/unit/engine/job-filter.test.ts',
    ],
    liftAsConst: true,
  },
  {
    name: 'validate',
    file: 'src/engine/validate.ts',
    tests: [
      'test/unit/engine/validate.test.ts',
      'test/unit/engine/validate-choices-edges.test.ts',
      'test/unit/engine/validate-limits-edges.test.ts',
      'test/unit/engine/validate-refusal-edges.test.ts',
      'test/unit/engine/sample-types.test.ts',
      'test/unit/engine/job-filter.test.ts',
    ],
  },
  {
    name: 'table-checks',
    file: 'src/engine/table-checks.ts',
    tests: [
      'test/unit/engine/table-checks.test.ts',
      'test/unit/engine/parameters-edges.test.ts',
      'test/unit/engine/validate.test.ts',
      'test/unit/engine/validate-choices-edges.test.ts',
      'test/unit/engine/validate-limits-edges.test.ts',
      'test/unit/engine/validate-refusal-edges.test.ts',
    ],
  },
  {
    name: 'flag-checks',
    file: 'src/engine/flag-checks.ts',
    tests: [
      'test/unit/engine/validate-choices-edges.test.ts',
      'test/unit/engine/validate-limits-edges.test.ts',
      'test/unit/engine/validate-refusal-edges.test.ts',
      'test/unit/engine/job-filter.test.ts',
      'test/unit/engine/job-schema.test.ts',
    ],
  },
  {
    name: 'job-filter',
    file: 'src/engine/job-filter.ts',
    tests: ['test/unit/engine/job-filter.test.ts'],
  },
  ...['framing-checks', 'into-checks', 'window-checks'].map((name) => ({
    name,
    file: `src/engine/${name}.ts`,
    tests: [
      'test/unit/engine/validate.test.ts',
      'test/unit/engine/validate-choices-edges.test.ts',
      'test/unit/engine/validate-limits-edges.test.ts',
      'test/unit/engine/validate-refusal-edges.test.ts',
      'test/unit/engine/job-filter.test.ts',
      'test/unit/engine/job-schema.test.ts',
    ],
  })),
  {
    name: 'params',
    file: 'src/server/params.ts',
    tests: ['test/unit/server/codec-params.test.ts', 'test/unit/server/params-edges.test.ts'],
  },
  {
    name: 'json-scan',
    file: 'src/server/json-scan.ts',
    tests: ['test/unit/server/json-scan.test.ts', 'test/unit/server/json-scan-edges.test.ts'],
  },
  {
    name: 'codec',
    file: 'src/queue/codec.ts',
    tests: ['test/unit/queue/codec.test.ts', 'test/unit/queue/codec-edges.test.ts'],
  },
  {
    name: 'geometry',
    file: 'src/signal/geometry.ts',
    tests: [
      'test/unit/signal/geometry.test.ts',
      'test/unit/signal/geometry-edges.test.ts',
      'test/unit/signal/framing.test.ts',
      'test/unit/signal/complex-input.test.ts',
    ],
  },
  {
    name: 'inverse-geometry',
    file: 'src/signal/inverse-geometry.ts',
    tests: [
      'test/unit/signal/geometry.test.ts',
      'test/unit/signal/geometry-edges.test.ts',
      'test/unit/signal/framing.test.ts',
    ],
  },
  {
    name: 'channel',
    file: 'src/pipeline/batching/channel.ts',
    tests: [
      'test/unit/pipeline/batching/batcher-options.test.ts',
      'test/unit/pipeline/batching/batcher-flushing.test.ts',
      'test/unit/pipeline/batching/batcher-routing.test.ts',
      'test/unit/pipeline/batching/batcher-backpressure.test.ts',
      'test/unit/pipeline/batching/batcher-close.test.ts',
      'test/unit/pipeline/batching/batcher-errors.test.ts',
      'test/unit/pipeline/batching/batcher-metrics.test.ts',
      'test/unit/pipeline/batching/batcher-auto-tuner.test.ts',
      'test/unit/pipeline/batching/batcher-bounded-waits.test.ts',
      'test/unit/pipeline/batching/bounded.test.ts',
      'test/unit/pipeline/batching/channel-edges.test.ts',
    ],
  },
  {
    name: 'slot-set',
    file: 'src/pipeline/lanes/slot-set.ts',
    tests: ['test/unit/pipeline/lanes/slot-set.test.ts'],
  },
  {
    name: 'admission',
    file: 'src/server/shedding/admission.ts',
    tests: ['test/unit/server/admission.test.ts', 'test/unit/server/admission-edges.test.ts'],
  },
  {
    name: 'fuser',
    file: 'src/server/fusion/job-fuser.ts',
    tests: [
      'test/unit/server/fusion-results.test.ts',
      'test/unit/server/fusion-refusals.test.ts',
      'test/unit/server/fusion-deadlines.test.ts',
      'test/unit/server/fusion-shapes.test.ts',
      'test/unit/server/fusion-lifecycle.test.ts',
      'test/unit/server/fusion-edges.test.ts',
    ],
  },
  {
    name: 'finite-samples',
    file: 'src/engine/finite-samples.ts',
    tests: ['test/unit/engine/finite-samples.test.ts'],
  },
  {
    name: 'fusion-key',
    file: 'src/server/fusion/fusion-key.ts',
    tests: [
      'test/unit/server/fusion-results.test.ts',
      'test/unit/server/fusion-refusals.test.ts',
      'test/unit/server/fusion-deadlines.test.ts',
      'test/unit/server/fusion-shapes.test.ts',
      'test/unit/server/fusion-lifecycle.test.ts',
      'test/unit/server/fusion-edges.test.ts',
    ],
  },
  {
    name: 'protocol',
    file: 'src/server/supervision/protocol.ts',
    tests: ['test/unit/server/protocol-edges.test.ts'],
  },
];
