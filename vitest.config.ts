import { defineConfig } from 'vitest/config';

// Every project compares typed arrays through one fast tester (see the file for why).
const setupFiles = ['test/setup/typed-array-equality.ts'];

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], setupFiles, testTimeout: 20_000 } },
      { test: { name: 'codegen', include: ['test/codegen/**/*.test.ts'], setupFiles, testTimeout: 120_000 } },
      { test: { name: 'gpu', include: ['test/gpu/**/*.test.ts'], setupFiles, globalSetup: ['test/gpu/announce.ts'], testTimeout: 120_000, fileParallelism: false } },
    ],
  },
});
