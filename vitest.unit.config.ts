import { defineConfig } from 'vitest/config';

// The unit tests alone, without the DynamoDB Local global setup: what `npm run mutate` runs for
// every mutant (StrykerJS), and a fast loop while working on the pure modules.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
delete process.env.ANTHROPIC_API_KEY;
delete process.env.ANTHROPIC_SECRET_ARN;
delete process.env.ANTHROPIC_BASE_URL;

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    exclude: [
      'test/unit/web/**',
      'test/unit/cli/**',
      // StrykerJS runs these tests on sources it instrumented with mutants, whose size and
      // comments are not the code's: the layout checks sit its runs out.
      ...(process.env.STRYKER_MUTATOR_WORKER === undefined ? [] : ['test/unit/layout/**']),
    ],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
