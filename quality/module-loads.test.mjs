// Part of every mutation run (quality/vitest.mutation.config.mjs): loads the module under test.
// A mutant that makes the module throw while it loads (a table or a map built at import) fails
// every test file that imports it, but Stryker's vitest runner sees a file that failed to load as
// one with no failing test and reports the mutant as survived; this test makes that failure a
// failed test, so the mutant counts as killed.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

it('the module under test loads', async () => {
  const file = process.env.TSCUDA_MUTATION_MODULE;
  expect(file, 'TSCUDA_MUTATION_MODULE names the module under test').toBeTruthy();
  const module = await import(/* @vite-ignore */ pathToFileURL(resolve(file)).href);
  expect(Object.keys(module).length).toBeGreaterThan(0);
});
