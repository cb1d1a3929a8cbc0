/*
 * Builders for the DynamoDB adapters, each reading only the table names it needs: a Lambda is
 * given (and granted) just the tables its declared access names.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { AuthRepository } from '../auth/ports.ts';
import { ANNOTATED } from '../core/annotations.ts';
import type { DomainEvent } from '../core/events.ts';
import type { PipelineMoments } from '../core/ports/series.ts';
import { makeApprovalRulesStore } from '../store/approval-rules.ts';
import { makeAccountStore } from '../store/auth/accounts.ts';
import { makeApiTokenStore } from '../store/auth/api-tokens.ts';
import { makeAttemptStore } from '../store/auth/attempts.ts';
import { makeMagicLinkStore } from '../store/auth/magic-links.ts';
import { makeMemberStore } from '../store/auth/members.ts';
import { makePeopleDirectory } from '../store/auth/people.ts';
import { makeSessionStore } from '../store/auth/sessions.ts';
import { makeTeamUsageKeyStore } from '../store/auth/usage-keys.ts';
import { makeEvaluationStore } from '../store/evaluations.ts';
import { pipelineMoments, relayCarriedEvent } from '../store/events.ts';
import { makeEvidenceStore } from '../store/evidence.ts';
import { makeExportStore } from '../store/export.ts';
import { makeIdempotencyStore } from '../store/idempotency.ts';
import { makeModelSpendStore } from '../store/model-spend.ts';
import { makeMonitorRepository } from '../store/monitors.ts';
import { makeDeletionRequests, makeDeletionStore } from '../store/pipeline-deletion.ts';
import { nextConfigurationVersion } from '../store/pipeline-writes.ts';
import { makePipelineReads, makePipelineRepository } from '../store/pipelines.ts';
import { makeQuotaStore } from '../store/quotas.ts';
import { makeRecordReads } from '../store/record-reads.ts';
import { makeRetentionStore } from '../store/retention.ts';
import { makeRolloutRepository, makeRolloutStore } from '../store/rollouts.ts';
import { makeRunRepository, makeRunWrites } from '../store/runs.ts';
import { makeSeriesReads } from '../store/series.ts';
import { makeTeamServing } from '../store/team-serving.ts';
import { makeTeamSettingsStore } from '../store/team-settings.ts';
import { makeReviseExecution, makeTraceStaging } from '../store/traces.ts';
import { getDocumentClient } from './aws.ts';
import { readConfig, tableName } from './config.ts';

export function runRepositoryFromEnv() {
  const config = readConfig({
    RUNS_TABLE: tableName,
    DATA_TABLE: z.optional(tableName),
    EVENTS_TABLE: z.optional(tableName),
  });
  return makeRunRepository(getDocumentClient(), {
    runs: config.RUNS_TABLE,
    data: config.DATA_TABLE,
    events: config.EVENTS_TABLE,
  });
}

/** Writes an event a run carried into the events table, once (the relay of carried events). */
export function carriedEventRelayFromEnv(): (event: DomainEvent) => Promise<'relayed' | 'already relayed'> {
  const config = readConfig({ EVENTS_TABLE: tableName });
  return (event) => relayCarriedEvent(getDocumentClient(), config.EVENTS_TABLE, event);
}

export function pipelineRepositoryFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makePipelineRepository(getDocumentClient(), config.DATA_TABLE, config.EVENTS_TABLE);
}

/** The pipelines' reads alone, for a function that records and activates nothing (a smaller bundle). */
export function pipelineReadsFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName });
  return makePipelineReads(getDocumentClient(), config.DATA_TABLE);
}

export function rolloutRepositoryFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeRolloutRepository(getDocumentClient(), config.DATA_TABLE, config.EVENTS_TABLE);
}

/** The rollouts alone, for a function that shows or ends them: its bundle holds no effect reads. */
export function rolloutStoreFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeRolloutStore(getDocumentClient(), config.DATA_TABLE, config.EVENTS_TABLE);
}

/** A pipeline's configuration versions (its atomic counter), for an approval that makes a configuration. */
export function configurationVersionsFromEnv() {
  const db = getDocumentClient();
  const { DATA_TABLE } = readConfig({ DATA_TABLE: tableName });
  return {
    nextConfigurationVersion: (pipelineId: string) => nextConfigurationVersion(db, DATA_TABLE, pipelineId),
  };
}

/** The auth table's stores, one per aggregate, composed into the one AuthRepository port. */
export function makeAuthRepository(
  db: DynamoDBDocumentClient,
  tableName: string,
  eventsTable?: string,
): AuthRepository {
  const table = { db, tableName, eventsTable };
  return {
    ...makeAccountStore(table),
    ...makeApiTokenStore(table),
    ...makeSessionStore(table),
    ...makeMagicLinkStore(table),
    ...makeAttemptStore(table),
  };
}

/** The stores a magic-link request uses (accounts, attempts, links): its bundle holds no others. */
export function magicLinkRequestStoresFromEnv() {
  const table = { db: getDocumentClient(), tableName: readConfig({ AUTH_TABLE: tableName }).AUTH_TABLE };
  return { ...makeAccountStore(table), ...makeAttemptStore(table), ...makeMagicLinkStore(table) };
}

export function authRepositoryFromEnv() {
  const config = readConfig({ AUTH_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeAuthRepository(getDocumentClient(), config.AUTH_TABLE, config.EVENTS_TABLE);
}

/** Teams' usage keys of the evaluation plan, on the team items (the authorizer reads them). */
export function teamUsageKeyStoreFromEnv() {
  return makeTeamUsageKeyStore({
    db: getDocumentClient(),
    tableName: readConfig({ AUTH_TABLE: tableName }).AUTH_TABLE,
  });
}

/** A team's members and invitations (the auth table, with the events table for their events). */
export function memberRepositoryFromEnv() {
  // Only the functions that change members write events (and have the events table).
  const config = readConfig({ AUTH_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeMemberStore({
    db: getDocumentClient(),
    tableName: config.AUTH_TABLE,
    eventsTable: config.EVENTS_TABLE,
  });
}

/** Users' emails and API tokens' names, for the functions that name people (access `readsNames`). */
export function peopleDirectoryFromEnv() {
  return makePeopleDirectory(getDocumentClient(), readConfig({ AUTH_TABLE: tableName }).AUTH_TABLE);
}

export function idempotencyStoreFromEnv() {
  return makeIdempotencyStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

export function evidenceStoreFromEnv() {
  return makeEvidenceStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

export function teamSettingsStoreFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeTeamSettingsStore(getDocumentClient(), config.DATA_TABLE, config.EVENTS_TABLE);
}

/** Starting a deletion and reading its receipt: what the API's functions need of deletions. */
export function deletionRequestsFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeDeletionRequests(getDocumentClient(), { data: config.DATA_TABLE, events: config.EVENTS_TABLE });
}

/** Hiding a pipeline's runs at its deletion: what the deleting function needs of the runs table. */
export function runHiderFromEnv() {
  return makeRunWrites(getDocumentClient(), { runs: readConfig({ RUNS_TABLE: tableName }).RUNS_TABLE });
}

export function deletionStoreFromEnv() {
  const config = readConfig({
    RUNS_TABLE: tableName,
    DATA_TABLE: tableName,
    EVENTS_TABLE: z.optional(tableName),
    SETTINGS_TABLE: z.optional(tableName),
  });
  return makeDeletionStore(getDocumentClient(), {
    runs: config.RUNS_TABLE,
    data: config.DATA_TABLE,
    events: config.EVENTS_TABLE,
    settings: config.SETTINGS_TABLE,
  });
}

export function retentionStoreFromEnv() {
  return makeRetentionStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

export function exportStoreFromEnv() {
  const config = readConfig({ RUNS_TABLE: tableName, DATA_TABLE: tableName });
  return makeExportStore(getDocumentClient(), { runs: config.RUNS_TABLE, data: config.DATA_TABLE });
}

export function quotaStoreFromEnv() {
  return makeQuotaStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

/** A team's model spend per calendar month (the data table). */
export function modelSpendStoreFromEnv() {
  return makeModelSpendStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

export function evaluationStoreFromEnv() {
  const config = readConfig({ RUNS_TABLE: tableName, DATA_TABLE: tableName });
  return makeEvaluationStore(getDocumentClient(), { runs: config.RUNS_TABLE, data: config.DATA_TABLE });
}

export function approvalRulesStoreFromEnv() {
  const config = readConfig({ SETTINGS_TABLE: tableName, DATA_TABLE: z.optional(tableName) });
  return makeApprovalRulesStore(getDocumentClient(), config.SETTINGS_TABLE, config.DATA_TABLE);
}

/** The staged spans of OTLP traces, and the revision of an execution assembled from more of them. */
export function traceStagingFromEnv() {
  const { DATA_TABLE } = readConfig({ DATA_TABLE: tableName });
  const db = getDocumentClient();
  return { traces: makeTraceStaging(db, DATA_TABLE), reviseExecution: makeReviseExecution(db, DATA_TABLE) };
}

/** Reading a pipeline's executions and signals back, page by page. */
export function recordReadsFromEnv() {
  const { DATA_TABLE } = readConfig({ DATA_TABLE: tableName });
  return makeRecordReads(getDocumentClient(), DATA_TABLE);
}

/** A team's serving at once (OpenFeature's bulk evaluation). */
export function teamServingFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName });
  return makeTeamServing(getDocumentClient(), config.DATA_TABLE);
}

/** A pipeline's monitors (with the events table for the judge's changes of state). */
export function monitorRepositoryFromEnv() {
  const config = readConfig({ DATA_TABLE: tableName, EVENTS_TABLE: z.optional(tableName) });
  return makeMonitorRepository(getDocumentClient(), config.DATA_TABLE, config.EVENTS_TABLE);
}

/** A pipeline's series (the metrics answer, a monitor's window); reads write the packs of settled periods. */
export function seriesReadsFromEnv() {
  const { DATA_TABLE } = readConfig({ DATA_TABLE: tableName });
  return makeSeriesReads({ db: getDocumentClient(), tableName: DATA_TABLE });
}

/** The moments a pipeline's charts mark: its activations and rollouts, from the events table. */
export function pipelineMomentsFromEnv(): PipelineMoments {
  const { EVENTS_TABLE } = readConfig({ EVENTS_TABLE: tableName });
  const db = getDocumentClient();
  return {
    list: (teamId, pipelineId, from, to, limit) =>
      pipelineMoments(db, EVENTS_TABLE, {
        teamId,
        pipelineId,
        from,
        to,
        types: Object.keys(ANNOTATED),
        limit,
      }),
  };
}
