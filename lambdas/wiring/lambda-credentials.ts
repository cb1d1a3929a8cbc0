/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (lib/bundling.ts `alias`):
 * a Lambda's credentials are always in its environment variables, so the SDK's default provider
 * there is the environment provider alone.
 */
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
