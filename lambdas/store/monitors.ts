/*
 * Monitors in the data table (keys: store/monitor-keys.ts): the DynamoDB adapter of
 * MonitorRepository. Creating and deleting keep the pipeline's count (its cap) in the same
 * transaction; the judge's writes are conditioned on the state counter it read.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../core/errors.ts';
import type { MonitorRepository } from '../core/ports/monitors.ts';
import { monitorRecordSchema } from '../core/schemas/monitors.ts';
import { failedTransactionItems, isConditionFailure, putNew } from './conditions.ts';
import { capReached, countDown, countUp, sendCounted } from './counted.ts';
import { eventPut } from './events.ts';
import { itemReader } from './items.ts';
import { pipelinePartition } from './keys.ts';
import {
  MONITOR_INDEX_SHARDS,
  MONITOR_PREFIX,
  monitorCountKey,
  monitorIndexKey,
  monitorIndexPartition,
  monitorKey,
} from './monitor-keys.ts';
import { queryPage } from './query-page.ts';

const readMonitor = /* @__PURE__ */ itemReader(monitorRecordSchema, 'monitor');

const notFound = (pipelineId: string, monitorId: string, cause: unknown) =>
  new NotFoundError(`Monitor ${monitorId} of pipeline ${pipelineId} does not exist.`, { cause });

/** Where the judge's pass over the index is: the shard, and the last key read in it. */
interface IndexPosition {
  shard: number;
  key?: Record<string, unknown>;
}

/** DynamoDB adapter of MonitorRepository; `eventsTable` for the judge's changes of state. */
export function makeMonitorRepository(
  db: DynamoDBDocumentClient,
  dataTable: string,
  eventsTable?: string,
): MonitorRepository {
  return {
    ...makeMonitorChanges(db, dataTable),
    ...makeMonitorReads(db, dataTable),
    ...makeMonitorJudgements(db, dataTable, eventsTable),
  };
}

/** Creating, changing and deleting a monitor (counted against the pipeline's cap). */
function makeMonitorChanges(
  db: DynamoDBDocumentClient,
  dataTable: string,
): Pick<MonitorRepository, 'create' | 'update' | 'remove'> {
  return {
    async create(monitor, maxPerPipeline) {
      await sendCounted(
        db,
        [
          countUp(dataTable, monitorCountKey(monitor.pipelineId), 'monitorCount', maxPerPipeline),
          putNew(dataTable, {
            ...monitorKey(monitor.pipelineId, monitor.id),
            ...monitorIndexKey(monitor.pipelineId, monitor.id),
            ...monitor,
          }),
        ],
        capReached(`A pipeline has at most ${maxPerPipeline} monitors; delete one you no longer need first.`),
      );
    },

    async update(pipelineId, monitorId, changes) {
      const entries = Object.entries(changes);
      try {
        const { Attributes } = await db.send(
          new UpdateCommand({
            TableName: dataTable,
            Key: monitorKey(pipelineId, monitorId),
            UpdateExpression: `SET ${entries.map((_, index) => `#f${index} = :v${index}`).join(', ')}`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: Object.fromEntries(
              entries.map(([name], index) => [`#f${index}`, name]),
            ),
            ExpressionAttributeValues: Object.fromEntries(
              entries.map(([, value], index) => [`:v${index}`, value]),
            ),
            ReturnValues: 'ALL_NEW',
          }),
        );
        return readMonitor(Attributes);
      } catch (error) {
        if (isConditionFailure(error)) throw notFound(pipelineId, monitorId, error);
        throw error;
      }
    },

    async remove(pipelineId, monitorId) {
      await sendCounted(
        db,
        [
          {
            Delete: {
              TableName: dataTable,
              Key: monitorKey(pipelineId, monitorId),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
          countDown(dataTable, monitorCountKey(pipelineId), 'monitorCount'),
        ],
        (cause) => notFound(pipelineId, monitorId, cause),
      );
    },
  };
}

/** A pipeline's monitors, and one of them. */
function makeMonitorReads(
  db: DynamoDBDocumentClient,
  dataTable: string,
): Pick<MonitorRepository, 'list' | 'get'> {
  return {
    list(pipelineId, page) {
      return queryPage(
        db,
        {
          tableName: dataTable,
          partition: { name: 'pk', value: pipelinePartition(pipelineId) },
          sortKeyPrefix: MONITOR_PREFIX,
          cursorAttributes: ['pk', 'sk'],
        },
        page,
        readMonitor,
      );
    },

    async get(pipelineId, monitorId) {
      const { Item } = await db.send(
        new GetCommand({
          TableName: dataTable,
          Key: monitorKey(pipelineId, monitorId),
          ConsistentRead: true,
        }),
      );
      return Item ? readMonitor(Item) : null;
    },
  };
}

/** The judge's pass over every monitor, and its conditioned writes. */
function makeMonitorJudgements(
  db: DynamoDBDocumentClient,
  dataTable: string,
  eventsTable: string | undefined,
): Pick<MonitorRepository, 'listAll' | 'recordJudgement'> {
  return {
    async listAll(cursor, limit) {
      let position: IndexPosition = cursor ? (JSON.parse(cursor) as IndexPosition) : { shard: 0 };
      while (position.shard < MONITOR_INDEX_SHARDS) {
        const { Items = [], LastEvaluatedKey } = await db.send(
          new QueryCommand({
            TableName: dataTable,
            IndexName: 'gsi2',
            KeyConditionExpression: 'gsi2pk = :pk',
            ExpressionAttributeValues: { ':pk': monitorIndexPartition(position.shard) },
            Limit: limit,
            ExclusiveStartKey: position.key,
          }),
        );
        const next: IndexPosition = LastEvaluatedKey
          ? { shard: position.shard, key: LastEvaluatedKey }
          : { shard: position.shard + 1 };
        const done = !LastEvaluatedKey && next.shard >= MONITOR_INDEX_SHARDS;
        if (Items.length > 0 || done) {
          return { items: Items.map(readMonitor), cursor: done ? null : JSON.stringify(next) };
        }
        position = next;
      }
      return { items: [], cursor: null };
    },

    async recordJudgement(monitor, judgement, event) {
      const changed = judgement.state !== monitor.state;
      const update = {
        TableName: dataTable,
        Key: monitorKey(monitor.pipelineId, monitor.id),
        UpdateExpression:
          'SET #state = :state, since = :since, lastValue = :value, judgedAt = :at, stateSeq = :next',
        ConditionExpression: 'attribute_exists(pk) AND stateSeq = :seq',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':state': judgement.state,
          ':since': judgement.since,
          ':value': judgement.lastValue,
          ':at': judgement.judgedAt,
          ':seq': monitor.stateSeq,
          ':next': monitor.stateSeq + (changed ? 1 : 0),
        },
      };
      try {
        if (event) {
          if (!eventsTable) throw new Error('The monitor repository was built without the events table.');
          await db.send(
            new TransactWriteCommand({ TransactItems: [{ Update: update }, eventPut(eventsTable, event)] }),
          );
        } else {
          await db.send(new UpdateCommand(update));
        }
        return 'written';
      } catch (error) {
        // Another judge (or a deletion) came first; an event already written is that judge's.
        if (isConditionFailure(error) || failedTransactionItems(error).length > 0) return 'stale';
        throw error;
      }
    },
  };
}
