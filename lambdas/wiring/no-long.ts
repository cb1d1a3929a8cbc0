/**
 * Stands in for long.js in the Lambda bundles (LAMBDA_BUNDLING.alias): protobufjs finds no Long
 * class in it and decodes 64-bit integers as numbers, as lambdas/otlp/decode.ts configures it
 * everywhere; long.js would be 11 KB parsed at every cold start of the OTLP ingest for nothing.
 */
export default undefined;
