import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 } },
      { test: { name: 'codegen', include: ['test/codegen/**/*.test.ts'], testTimeout: 120_000 } },
      { test: { name: 'gpu', include: ['test/gpu/**/*.test.ts'], globalSetup: ['test/gpu/announce.ts'], testTimeout: 120_000, fileParallelism: false } },
    ],
  },
});
