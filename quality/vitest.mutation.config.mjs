// The vitest configuration of a mutation run (quality/mutation.mjs): only the test files that guard
// the module being mutated, named by the runner in TSCUDA_MUTATION_TESTS, and quality/module-loads.test.mjs.
import { defineConfig } from 'vitest/config';

const include = (process.env.TSCUDA_MUTATION_TESTS ?? '').split(',').filter((file) => file !== '');
if (include.length === 0)
  throw new Error('TSCUDA_MUTATION_TESTS names no test file: run this configuration through npm run test:mutation');

export default defineConfig({
  test: {
    include: [...include, 'quality/module-loads.test.mjs'],
    setupFiles: ['test/setup/typed-array-equality.ts'],
    testTimeout: 20_000,
  },
});
