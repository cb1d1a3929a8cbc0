import { defineConfig } from 'vitest/config';

// The AWS SDK warns once per process about Node 20, which package.json supports; keep test output clean.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// A developer's real key must never make a test call the Anthropic API: tests use the local fake.
delete process.env.ANTHROPIC_API_KEY;
delete process.env.ANTHROPIC_SECRET_ARN;
delete process.env.ANTHROPIC_BASE_URL;
// UTC, as Lambda and `npm start` (local/start.ts): the local stacks the tests start run their
// functions as worker threads on Node 24, as `npm start` does (child processes elsewhere).
process.env.TZ = 'UTC';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local for the whole run; each test file makes its own tables.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
