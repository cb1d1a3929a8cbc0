/*
 * Every key of every item in the tables, built in one place: the stores, the local stack and the
 * tests read and write items only through these builders, so a key pattern cannot drift.
 */
import type { Activation, Configuration, Execution, Signal } from '../core/schemas.ts';

/** The attributes that place an item in a table or index; never part of what a store returns. */
export const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk'] as const;

/** A table's primary key (pk/sk tables). */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** An item's place in the gsi1 index. */
export interface IndexKey {
  gsi1pk: string;
  gsi1sk: string;
}

/* ---- runs table: one item per run, keyed by the run id ---- */

export const runKey = (id: string) => ({ id });

/*
 * Data table. Signals and executions live in one partition per pipeline with a time-ordered sort
 * key, so "the newest N" is a single Query with Limit whatever the history size.
 *   pipeline       pk PIPELINE#<id>              sk PIPELINE        gsi1 TEAM#<teamId>#PIPELINES / <createdAt>#<id>
 *   configuration  pk PIPELINE#<id>              sk CONFIGURATION#<configurationId>
 *   activation     pk PIPELINE#<id>              sk ACTIVATION#<activatedAt>#<activationId>
 *   signal         pk PIPELINE#<id>#SIGNALS      sk <occurredAt>#<signalId>
 *   execution      pk PIPELINE#<id>#EXECUTIONS   sk <startedAt>#<executionId>
 *   evidence       pk RUN#<runId>#EVIDENCE       sk SIGNAL#<signalId> | EXECUTION#<executionId>
 *   idempotency    pk IDEMPOTENCY#<scope>#<key>  sk IDEMPOTENCY
 *   quota          pk QUOTA#<key>#<windowStart>  sk QUOTA
 */
const pipelinePartition = (pipelineId: string) => `PIPELINE#${pipelineId}`;

export const dataKeys = {
  pipeline: (pipelineId: string): ItemKey => ({ pk: pipelinePartition(pipelineId), sk: 'PIPELINE' }),
  /** The gsi1 partition that lists a team's pipelines, newest first. */
  teamPipelines: (teamId: string) => `TEAM#${teamId}#PIPELINES`,
  pipelineIndex: (pipeline: { id: string; teamId: string; createdAt: string }): IndexKey => ({
    gsi1pk: dataKeys.teamPipelines(pipeline.teamId),
    gsi1sk: `${pipeline.createdAt}#${pipeline.id}`,
  }),
  /** The pipeline's own partition: the pipeline, its configurations and its activations. */
  pipelinePartition,
  configurationPrefix: 'CONFIGURATION#',
  configuration: (pipelineId: string, configurationId: string): ItemKey => ({
    pk: pipelinePartition(pipelineId),
    sk: `${dataKeys.configurationPrefix}${configurationId}`,
  }),
  configurationOf: (configuration: Pick<Configuration, 'pipelineId' | 'id'>) =>
    dataKeys.configuration(configuration.pipelineId, configuration.id),
  /** Activations sort by time within the pipeline's partition: the pipeline's history, one Query. */
  activationPrefix: 'ACTIVATION#',
  activation: (activation: Pick<Activation, 'pipelineId' | 'activatedAt' | 'id'>): ItemKey => ({
    pk: pipelinePartition(activation.pipelineId),
    sk: `${dataKeys.activationPrefix}${activation.activatedAt}#${activation.id}`,
  }),
  signals: (pipelineId: string) => `${pipelinePartition(pipelineId)}#SIGNALS`,
  signal: (signal: Pick<Signal, 'pipelineId' | 'occurredAt' | 'id'>): ItemKey => ({
    pk: dataKeys.signals(signal.pipelineId),
    sk: `${signal.occurredAt}#${signal.id}`,
  }),
  executions: (pipelineId: string) => `${pipelinePartition(pipelineId)}#EXECUTIONS`,
  execution: (execution: Pick<Execution, 'pipelineId' | 'startedAt' | 'id'>): ItemKey => ({
    pk: dataKeys.executions(execution.pipelineId),
    sk: `${execution.startedAt}#${execution.id}`,
  }),
  evidence: (runId: string) => `RUN#${runId}#EVIDENCE`,
  evidenceItem: (runId: string, kind: 'signal' | 'execution', recordId: string): ItemKey => ({
    pk: dataKeys.evidence(runId),
    sk: `${kind === 'signal' ? 'SIGNAL' : 'EXECUTION'}#${recordId}`,
  }),
  idempotency: (scope: string, key: string): ItemKey => ({
    pk: `IDEMPOTENCY#${scope}#${key}`,
    sk: 'IDEMPOTENCY',
  }),
  quota: (key: string, windowStart: string): ItemKey => ({ pk: `QUOTA#${key}#${windowStart}`, sk: 'QUOTA' }),
};

/*
 * Auth table. No secret is stored: tokens by their SHA-256 only, passwords as scrypt.
 *   team          pk TEAM#<teamId>            sk TEAM
 *   user          pk USER#<userId>            sk USER
 *   email         pk EMAIL#<lower-case>       sk EMAIL        (uniqueness and login lookup)
 *   membership    pk USER#<userId>            sk TEAM#<teamId> gsi1 TEAM#<teamId>#MEMBERS / <userId>
 *   api token     pk APITOKEN#<sha256>        sk APITOKEN     gsi1 USER#<userId>#APITOKENS / <createdAt>#<tokenId>
 *   api token id  pk APITOKENID#<tokenId>     sk APITOKENID   → tokenHash (for DELETE /api-tokens/{id})
 *   session       pk SESSION#<sessionId>      sk SESSION      gsi1 USER#<userId>#SESSIONS / <createdAt>#<sessionId>
 *   refresh token pk REFRESH#<sha256>         sk REFRESH      (kept after use until the session ends: reuse detection)
 *   magic link    pk MAGICLINK#<sha256>       sk MAGICLINK
 *   attempts      pk ATTEMPTS#<key>           sk ATTEMPTS     (login / magic-link throttling windows)
 */
const userPartition = (userId: string) => `USER#${userId}`;

/** Every API token item's pk starts so: the authorizer's write grant is limited to these items. */
export const API_TOKEN_PARTITION_PREFIX = 'APITOKEN#';

export const authKeys = {
  team: (teamId: string): ItemKey => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' }),
  user: (userId: string): ItemKey => ({ pk: userPartition(userId), sk: 'USER' }),
  /** Expects the normalized (lower-case) address. */
  email: (normalizedEmail: string): ItemKey => ({ pk: `EMAIL#${normalizedEmail}`, sk: 'EMAIL' }),
  /** A user's memberships share the user's partition, their sort keys start so. */
  membershipPrefix: 'TEAM#',
  userPartition,
  membership: (userId: string, teamId: string): ItemKey => ({
    pk: userPartition(userId),
    sk: `${authKeys.membershipPrefix}${teamId}`,
  }),
  membershipIndex: (membership: { userId: string; teamId: string }): IndexKey => ({
    gsi1pk: `TEAM#${membership.teamId}#MEMBERS`,
    gsi1sk: membership.userId,
  }),
  apiToken: (tokenHash: string): ItemKey => ({
    pk: `${API_TOKEN_PARTITION_PREFIX}${tokenHash}`,
    sk: 'APITOKEN',
  }),
  apiTokenId: (tokenId: string): ItemKey => ({ pk: `APITOKENID#${tokenId}`, sk: 'APITOKENID' }),
  /** The gsi1 partition that lists a user's API tokens, newest first. */
  userApiTokens: (userId: string) => `${userPartition(userId)}#APITOKENS`,
  apiTokenIndex: (token: { userId: string; createdAt: string; tokenId: string }): IndexKey => ({
    gsi1pk: authKeys.userApiTokens(token.userId),
    gsi1sk: `${token.createdAt}#${token.tokenId}`,
  }),
  session: (sessionId: string): ItemKey => ({ pk: `SESSION#${sessionId}`, sk: 'SESSION' }),
  /** The gsi1 partition that lists a user's sessions. */
  userSessions: (userId: string) => `${userPartition(userId)}#SESSIONS`,
  sessionIndex: (session: { userId: string; createdAt: string; sessionId: string }): IndexKey => ({
    gsi1pk: authKeys.userSessions(session.userId),
    gsi1sk: `${session.createdAt}#${session.sessionId}`,
  }),
  refreshToken: (tokenHash: string): ItemKey => ({ pk: `REFRESH#${tokenHash}`, sk: 'REFRESH' }),
  magicLink: (tokenHash: string): ItemKey => ({ pk: `MAGICLINK#${tokenHash}`, sk: 'MAGICLINK' }),
  attempts: (key: string): ItemKey => ({ pk: `ATTEMPTS#${key}`, sk: 'ATTEMPTS' }),
};
