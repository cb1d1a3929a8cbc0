/**
 * The tables, described once. The CDK stack (lib/stateful.ts) and the local stack
 * (local/dynamodb.ts) both build their tables from these definitions, so they cannot drift.
 * Every key attribute is a string.
 */
/**
 * The attribute in which a change that writes one item only (a run's reject, a pipeline's approval
 * rules) carries its event: the one write holds the change and its event at once, as atomic as a
 * transaction and without its cost; the table's stream relays the event into the events table
 * (store/events.ts), filtered on this attribute (lambdas/functions.ts EVENT_RELAY).
 */
export const CARRIED_EVENT_ATTRIBUTE = 'outboxEvent';

export interface IndexDefinition {
  indexName: string;
  partitionKey: string;
  sortKey?: string;
}

export interface TableDefinition {
  /** The construct id in CDK and the suffix of the local table name. */
  id: 'Runs' | 'Data' | 'Auth' | 'Events' | 'Settings';
  /** Lambda environment variable that carries the table name. */
  envVar: 'RUNS_TABLE' | 'DATA_TABLE' | 'AUTH_TABLE' | 'EVENTS_TABLE' | 'SETTINGS_TABLE';
  partitionKey: string;
  sortKey?: string;
  indexes: IndexDefinition[];
  /** Attribute holding an epoch-seconds expiry for DynamoDB TTL. */
  timeToLiveAttribute?: string;
  /**
   * A DynamoDB Stream: new item images (the outbox's, read by the event deliverer), or new and old
   * (the runs' and the settings', read by the relay of the events their items carry: an event is
   * new only when the old image did not hold it).
   */
  stream?: 'NEW_IMAGE' | 'NEW_AND_OLD_IMAGES';
}

/**
 * Synthesis runs: one item per run, attribute names equal the API's wire names, plus `outboxEvent`
 * (store/events.ts CARRIED_EVENT_ATTRIBUTE): the event of a change that wrote the run alone, which
 * the stream's relay copies into the events table.
 */
export const RUNS_TABLE: TableDefinition = {
  id: 'Runs',
  envVar: 'RUNS_TABLE',
  partitionKey: 'id',
  indexes: [
    { indexName: 'byPipeline', partitionKey: 'pipelineId', sortKey: 'createdAt' },
    // The sweeper finds runs left pending or generating too long with a Query on this index.
    { indexName: 'byStatus', partitionKey: 'status', sortKey: 'createdAt' },
  ],
  stream: 'NEW_AND_OLD_IMAGES',
};

/** Pipelines, configurations, signals, executions (and idempotency keys), keyed by pk/sk. */
export const DATA_TABLE: TableDefinition = {
  id: 'Data',
  envVar: 'DATA_TABLE',
  partitionKey: 'pk',
  sortKey: 'sk',
  indexes: [
    { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    // Executions by the configuration they ran, newest first (the effect of an approval), and the
    // pipelines with an active rollout (the guardrail's pass): both bounded Queries.
    { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
  timeToLiveAttribute: 'expiresAtEpoch',
};

/** Users, teams, memberships, API tokens (by hash), sessions. Only hashes of secrets. */
export const AUTH_TABLE: TableDefinition = {
  id: 'Auth',
  envVar: 'AUTH_TABLE',
  partitionKey: 'pk',
  sortKey: 'sk',
  indexes: [{ indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }],
  timeToLiveAttribute: 'expiresAtEpoch',
};

/**
 * The transactional outbox and the audit log in one: every event item is written in the same
 * transaction as its change; the stream feeds the deliverer (webhooks, EventBridge); the team's
 * partition, newest first, is the audit log; TTL removes an event after 400 days.
 */
export const EVENTS_TABLE: TableDefinition = {
  id: 'Events',
  envVar: 'EVENTS_TABLE',
  partitionKey: 'pk',
  sortKey: 'sk',
  indexes: [{ indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }],
  timeToLiveAttribute: 'expiresAtEpoch',
  stream: 'NEW_IMAGE',
};

/**
 * Settings a person changes now and then, each change an audited event: a pipeline's approval
 * rules (keys: store/keys.ts approvalRulesKey). A table of their own so that its stream carries
 * only these rare writes: a change writes its one item carrying its event (`outboxEvent`), as a
 * run's reject does, and the relay copies the event into the events table.
 */
export const SETTINGS_TABLE: TableDefinition = {
  id: 'Settings',
  envVar: 'SETTINGS_TABLE',
  partitionKey: 'pk',
  sortKey: 'sk',
  indexes: [],
  stream: 'NEW_AND_OLD_IMAGES',
};

export const TABLE_DEFINITIONS: readonly TableDefinition[] = [
  RUNS_TABLE,
  DATA_TABLE,
  AUTH_TABLE,
  EVENTS_TABLE,
  SETTINGS_TABLE,
];
