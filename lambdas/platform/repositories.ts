import * as z from 'zod/mini';
import { makeAuthRepository } from '../store/auth.ts';
import { makeEvidenceStore } from '../store/evidence.ts';
import { makeIdempotencyStore } from '../store/idempotency.ts';
import { makePipelineRepository } from '../store/pipelines.ts';
import { makeQuotaStore } from '../store/quotas.ts';
import { makeRunRepository } from '../store/runs.ts';
import { getDocumentClient } from './aws.ts';
import { readConfig, tableName } from './config.ts';

/*
 * Builders for the DynamoDB adapters, each reading only the table names it needs: a Lambda is
 * given (and granted) just the tables its route table row names.
 */
export function runRepositoryFromEnv() {
  const config = readConfig({ RUNS_TABLE: tableName, DATA_TABLE: z.optional(tableName) });
  return makeRunRepository(getDocumentClient(), { runs: config.RUNS_TABLE, data: config.DATA_TABLE });
}

export function pipelineRepositoryFromEnv() {
  return makePipelineRepository(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

export function authRepositoryFromEnv() {
  return makeAuthRepository(getDocumentClient(), readConfig({ AUTH_TABLE: tableName }).AUTH_TABLE);
}

export function idempotencyStoreFromEnv() {
  return makeIdempotencyStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

export function evidenceStoreFromEnv() {
  return makeEvidenceStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}

export function quotaStoreFromEnv() {
  return makeQuotaStore(getDocumentClient(), readConfig({ DATA_TABLE: tableName }).DATA_TABLE);
}
