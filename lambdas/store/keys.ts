/*
 * Every key of every item in the tables, built in one place: the stores, the local stack and the
 * tests read and write items only through these builders, so a key pattern cannot drift.
 */
import type { Activation, Execution, Signal } from '../core/schemas.ts';

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
 *   signal id      pk PIPELINE#<id>#SIGNALIDS    sk <signalId>     (→ recordTime: an id is unique in its
 *   execution id   pk PIPELINE#<id>#EXECUTIONIDS sk <executionId>  pipeline; internal; one partition per
 *                                                                  pipeline, so a Query finds them all)
 *   evidence       pk RUN#<runId>#EVIDENCE       sk SIGNAL#<signalId> | EXECUTION#<executionId>
 *   idempotency    pk IDEMPOTENCY#<scope>#<key>  sk IDEMPOTENCY
 *   quota          pk QUOTA#<key>#<windowStart>  sk QUOTA
 * (Plain functions, not an object of them: a bundle keeps only the builders its Lambda uses.)
 */

/** The pipeline's own partition: the pipeline, its configurations and its activations. */
export const pipelinePartition = (pipelineId: string) => `PIPELINE#${pipelineId}`;

export const pipelineKey = (pipelineId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: 'PIPELINE',
});

/** The gsi1 partition that lists a team's pipelines, newest first. */
export const teamPipelinesPartition = (teamId: string) => `TEAM#${teamId}#PIPELINES`;

export const pipelineIndexKey = (pipeline: { id: string; teamId: string; createdAt: string }): IndexKey => ({
  gsi1pk: teamPipelinesPartition(pipeline.teamId),
  gsi1sk: `${pipeline.createdAt}#${pipeline.id}`,
});

export const CONFIGURATION_PREFIX = 'CONFIGURATION#';

export const configurationKey = (pipelineId: string, configurationId: string): ItemKey => ({
  pk: pipelinePartition(pipelineId),
  sk: `${CONFIGURATION_PREFIX}${configurationId}`,
});

/** Activations sort by time within the pipeline's partition: the pipeline's history, one Query. */
export const ACTIVATION_PREFIX = 'ACTIVATION#';

export const activationKey = (
  activation: Pick<Activation, 'pipelineId' | 'activatedAt' | 'id'>,
): ItemKey => ({
  pk: pipelinePartition(activation.pipelineId),
  sk: `${ACTIVATION_PREFIX}${activation.activatedAt}#${activation.id}`,
});

export const signalsPartition = (pipelineId: string) => `${pipelinePartition(pipelineId)}#SIGNALS`;

export const signalKey = (signal: Pick<Signal, 'pipelineId' | 'occurredAt' | 'id'>): ItemKey => ({
  pk: signalsPartition(signal.pipelineId),
  sk: `${signal.occurredAt}#${signal.id}`,
});

export const executionsPartition = (pipelineId: string) => `${pipelinePartition(pipelineId)}#EXECUTIONS`;

export const executionKey = (execution: Pick<Execution, 'pipelineId' | 'startedAt' | 'id'>): ItemKey => ({
  pk: executionsPartition(execution.pipelineId),
  sk: `${execution.startedAt}#${execution.id}`,
});

/**
 * The marker that holds a signal id in its pipeline, whatever the signal's time: written before
 * the signals, it makes one id name one signal. Read by no endpoint.
 */
export const signalIdKey = (pipelineId: string, signalId: string): ItemKey => ({
  pk: `${pipelinePartition(pipelineId)}#SIGNALIDS`,
  sk: signalId,
});

/** The marker that holds an execution id in its pipeline, as signalIdKey does for signals. */
export const executionIdKey = (pipelineId: string, executionId: string): ItemKey => ({
  pk: `${pipelinePartition(pipelineId)}#EXECUTIONIDS`,
  sk: executionId,
});

export const evidencePartition = (runId: string) => `RUN#${runId}#EVIDENCE`;

export const evidenceKey = (runId: string, kind: 'signal' | 'execution', recordId: string): ItemKey => ({
  pk: evidencePartition(runId),
  sk: `${kind === 'signal' ? 'SIGNAL' : 'EXECUTION'}#${recordId}`,
});

export const idempotencyKey = (scope: string, key: string): ItemKey => ({
  pk: `IDEMPOTENCY#${scope}#${key}`,
  sk: 'IDEMPOTENCY',
});

export const quotaKey = (key: string, windowStart: string): ItemKey => ({
  pk: `QUOTA#${key}#${windowStart}`,
  sk: 'QUOTA',
});

/*
 * Auth table. No secret is stored: tokens by their SHA-256 only, passwords as scrypt.
 *   team          pk TEAM#<teamId>            sk TEAM
 *   user          pk USER#<userId>            sk USER
 *   email         pk EMAIL#<lower-case>       sk EMAIL        (uniqueness and login lookup)
 *   membership    pk USER#<userId>            sk TEAM#<teamId> gsi1 TEAM#<teamId>#MEMBERS / <userId>
 *   api token     pk APITOKEN#<sha256>        sk APITOKEN     gsi1 USER#<userId>#APITOKENS / <createdAt>#<tokenId>
 *   api token id  pk APITOKENID#<tokenId>     sk APITOKENID   → tokenHash (for revoking by id)
 *   session       pk SESSION#<sessionId>      sk SESSION      gsi1 USER#<userId>#SESSIONS / <createdAt>#<sessionId>
 *   refresh token pk REFRESH#<sha256>         sk REFRESH      (kept after use until the session ends: reuse detection)
 *   magic link    pk MAGICLINK#<sha256>       sk MAGICLINK
 *   attempts      pk ATTEMPTS#<key>           sk ATTEMPTS     (login, password-change and magic-link throttling)
 */

export const teamKey = (teamId: string): ItemKey => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' });

/** The user's partition: the user and their memberships. */
export const userPartition = (userId: string) => `USER#${userId}`;

export const userKey = (userId: string): ItemKey => ({ pk: userPartition(userId), sk: 'USER' });

/** Expects the normalized (lower-case) address. */
export const emailKey = (normalizedEmail: string): ItemKey => ({
  pk: `EMAIL#${normalizedEmail}`,
  sk: 'EMAIL',
});

/** A user's memberships share the user's partition; their sort keys start so. */
export const MEMBERSHIP_PREFIX = 'TEAM#';

export const membershipKey = (userId: string, teamId: string): ItemKey => ({
  pk: userPartition(userId),
  sk: `${MEMBERSHIP_PREFIX}${teamId}`,
});

export const membershipIndexKey = (membership: { userId: string; teamId: string }): IndexKey => ({
  gsi1pk: `TEAM#${membership.teamId}#MEMBERS`,
  gsi1sk: membership.userId,
});

/** Every API token item's pk starts so: the authorizer's write grant is limited to these items. */
export const API_TOKEN_PARTITION_PREFIX = 'APITOKEN#';

export const apiTokenKey = (tokenHash: string): ItemKey => ({
  pk: `${API_TOKEN_PARTITION_PREFIX}${tokenHash}`,
  sk: 'APITOKEN',
});

export const apiTokenIdKey = (tokenId: string): ItemKey => ({
  pk: `APITOKENID#${tokenId}`,
  sk: 'APITOKENID',
});

/** The gsi1 partition that lists a user's API tokens, newest first. */
export const userApiTokensPartition = (userId: string) => `${userPartition(userId)}#APITOKENS`;

export const apiTokenIndexKey = (token: {
  userId: string;
  createdAt: string;
  tokenId: string;
}): IndexKey => ({
  gsi1pk: userApiTokensPartition(token.userId),
  gsi1sk: `${token.createdAt}#${token.tokenId}`,
});

export const sessionKey = (sessionId: string): ItemKey => ({ pk: `SESSION#${sessionId}`, sk: 'SESSION' });

/** The gsi1 partition that lists a user's sessions. */
export const userSessionsPartition = (userId: string) => `${userPartition(userId)}#SESSIONS`;

export const sessionIndexKey = (session: {
  userId: string;
  createdAt: string;
  sessionId: string;
}): IndexKey => ({
  gsi1pk: userSessionsPartition(session.userId),
  gsi1sk: `${session.createdAt}#${session.sessionId}`,
});

export const refreshTokenKey = (tokenHash: string): ItemKey => ({
  pk: `REFRESH#${tokenHash}`,
  sk: 'REFRESH',
});

export const magicLinkKey = (tokenHash: string): ItemKey => ({
  pk: `MAGICLINK#${tokenHash}`,
  sk: 'MAGICLINK',
});

export const attemptsKey = (key: string): ItemKey => ({ pk: `ATTEMPTS#${key}`, sk: 'ATTEMPTS' });

/*
 * Events table: the outbox and the audit log (store/events.ts).
 *   event    pk TEAM#<teamId>#EVENTS   sk <timestamp>#<eventId>   gsi1 PIPELINE#<pipelineId>#EVENTS / <timestamp>#<eventId>
 * A team's partition newest first is its audit log; the index narrows it to one pipeline.
 */

export const teamEventsPartition = (teamId: string) => `TEAM#${teamId}#EVENTS`;

export const pipelineEventsPartition = (pipelineId: string) => `PIPELINE#${pipelineId}#EVENTS`;

export const eventKey = (event: { id: string; timestamp: string; data: { teamId: string } }): ItemKey => ({
  pk: teamEventsPartition(event.data.teamId),
  sk: `${event.timestamp}#${event.id}`,
});

export const eventIndexKey = (event: {
  id: string;
  timestamp: string;
  data: { pipelineId?: string | undefined };
}): IndexKey | Record<string, never> =>
  event.data.pipelineId
    ? { gsi1pk: pipelineEventsPartition(event.data.pipelineId), gsi1sk: `${event.timestamp}#${event.id}` }
    : {};

/*
 * Webhooks, in the data table (store/webhooks.ts):
 *   webhook        pk TEAM#<teamId>#WEBHOOKS            sk WEBHOOK#<webhookId>
 *   webhook count  pk TEAM#<teamId>#WEBHOOKS            sk COUNT            (the per-team limit)
 *   delivery       pk WEBHOOK#<webhookId>#DELIVERIES    sk <attemptedAt>#<deliveryId>   (TTL 30 days)
 */

export const teamWebhooksPartition = (teamId: string) => `TEAM#${teamId}#WEBHOOKS`;

export const WEBHOOK_PREFIX = 'WEBHOOK#';

export const webhookKey = (teamId: string, webhookId: string): ItemKey => ({
  pk: teamWebhooksPartition(teamId),
  sk: `${WEBHOOK_PREFIX}${webhookId}`,
});

export const webhookCountKey = (teamId: string): ItemKey => ({
  pk: teamWebhooksPartition(teamId),
  sk: 'COUNT',
});

export const webhookDeliveriesPartition = (webhookId: string) => `WEBHOOK#${webhookId}#DELIVERIES`;

export const deliveryKey = (delivery: { webhookId: string; attemptedAt: string; id: string }): ItemKey => ({
  pk: webhookDeliveriesPartition(delivery.webhookId),
  sk: `${delivery.attemptedAt}#${delivery.id}`,
});
