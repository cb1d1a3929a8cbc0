/*
 * The keys of the spans staged under their trace (OTLP ingest, store/traces.ts), beside the
 * records' keys (store/keys.ts).
 */
import { pipelinePartition } from './keys.ts';

/**
 * A trace's parts live in one of TRACE_SHARDS partitions of the pipeline, picked by the trace id
 * (so no key is the pipeline's alone), sorted under the trace id; deletion visits every shard.
 * `pk PIPELINE#<id>#TRACES#<shard>`, `sk <traceId>#<digest of the part's span ids>#<chunk>`.
 */
export const TRACE_SHARDS = 32;

export const traceShardPartition = (pipelineId: string, shard: number) =>
  `${pipelinePartition(pipelineId)}#TRACES#${shard.toString().padStart(2, '0')}`;

export const tracePartition = (pipelineId: string, traceId: string) =>
  traceShardPartition(pipelineId, Number.parseInt(traceId.slice(-4), 16) % TRACE_SHARDS);

/**
 * The mark of a trace that a part not whole was staged for (its spans must be read back to
 * assemble it), in the trace's partition beside its parts; it holds no spans.
 */
export const partialTraceKey = (pipelineId: string, traceId: string) => ({
  pk: tracePartition(pipelineId, traceId),
  sk: `${traceId}#PARTIAL`,
});
