/*
 * Stands in for protobufjs/minimal.js in the Lambda bundles (LAMBDA_BUNDLING.alias): the same
 * entry, configured the same way, without the writer and the RPC service, which nothing bundled
 * uses (the OTLP ingest only reads protobuf; its small answer is written in lambdas/otlp/decode.ts):
 * about 9 KB less in the ingest's bundle, which sits at API Gateway functions' 400 KB budget.
 */
import Reader from 'protobufjs/src/reader.js';
import BufferReader from 'protobufjs/src/reader_buffer.js';
import roots from 'protobufjs/src/roots.js';
import util from 'protobufjs/src/util/minimal.js';

function configure() {
  util.LongBits._configure(util.Long);
  Reader._configure(BufferReader);
}
configure();

export default { build: 'minimal', Reader, BufferReader, util, roots, configure };
