/* The keys of a pipeline's series (store/series.ts), beside the records' (store/keys.ts). */
import { pipelinePartition } from './keys.ts';

/**
 * A pipeline's series (store/series.ts): counters by the minute and the hour, added with the
 * recording into one of SERIES_SHARDS items a bucket (the batch's shard: concurrent transactions
 * conflict on an item, not on a partition), all of a grain in one partition, so that one Query
 * reads the recent buckets; and packs of finished periods (an hour of minutes, a day of hours)
 * merged from them by the first read after, listed by a small index.
 *   series   pk PIPELINE#<id>#SERIES#M|H   sk <bucket start>#A#<shard> | <bucket start>#C#<configurationId>#<shard>
 *   packs    pk PIPELINE#<id>#SERIES#PM|PH sk <period start>#A | …#C#<configurationId>   (b: the buckets)
 *   index    pk PIPELINE#<id>#SERIES#IM|IH sk <period start>#A  (packedAt, lateAt, configurations)
 * A read lists a range's periods from the index, one item of a few bytes each: DynamoDB counts a
 * Query's read units (and DynamoDB Local its time) by the items' whole size, whatever the
 * projection, and a pack of 60 buckets is several kilobytes. Before this layout, each shard had
 * its own partition (…#SERIES#M|H#<nn>, sk without the shard): still read when a period is packed,
 * exported, and removed with the rest.
 */
export const SERIES_SHARDS = 4;

const grainLetter = (grain: 'minute' | 'hour') => (grain === 'minute' ? 'M' : 'H');

export const seriesPartition = (pipelineId: string, grain: 'minute' | 'hour') =>
  `${pipelinePartition(pipelineId)}#SERIES#${grainLetter(grain)}`;

/** A shard's own partition, as the series were kept before (read for packing, removed, exported). */
export const legacySeriesPartition = (pipelineId: string, grain: 'minute' | 'hour', shard: number) =>
  `${seriesPartition(pipelineId, grain)}#${String(shard).padStart(2, '0')}`;

export const seriesPackPartition = (pipelineId: string, grain: 'minute' | 'hour') =>
  `${pipelinePartition(pipelineId)}#SERIES#P${grainLetter(grain)}`;

export const seriesIndexPartition = (pipelineId: string, grain: 'minute' | 'hour') =>
  `${pipelinePartition(pipelineId)}#SERIES#I${grainLetter(grain)}`;

/** The shards of the layout before, by number. */
export const LEGACY_SHARDS: readonly number[] = /* @__PURE__ */ Array.from(
  { length: SERIES_SHARDS },
  (_, shard) => shard,
);

/** Every partition of a pipeline's series: each grain's counters (and the layout before's), packs and index. */
export const SERIES_PARTITIONS: ReadonlyArray<(pipelineId: string) => string> = /* @__PURE__ */ (
  ['minute', 'hour'] as const
).flatMap((grain) => [
  (pipelineId: string) => seriesPartition(pipelineId, grain),
  ...LEGACY_SHARDS.map((shard) => (pipelineId: string) => legacySeriesPartition(pipelineId, grain, shard)),
  (pipelineId: string) => seriesPackPartition(pipelineId, grain),
  (pipelineId: string) => seriesIndexPartition(pipelineId, grain),
]);
