/*
 * A team's members and invitations in the auth table: the MemberRepository. Role changes and
 * removals are conditioned on the team item's membersVersion (and raise it), so the last-admin rule
 * holds under concurrency; roles are read strongly consistent from the membership items.
 */
import { BatchGetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { InvitationRecord, MemberRecord, MemberRepository } from '../../auth/member-ports.ts';
import type { Membership } from '../../auth/ports.ts';
import { ConflictError, NotFoundError } from '../../core/errors.ts';
import type { DomainEvent } from '../../core/events.ts';
import { roleSchema } from '../../core/principal.ts';
import { failedTransactionItems, putNew } from '../conditions.ts';
import { eventPut } from '../events.ts';
import { itemReader } from '../items.ts';
import { type ItemKey, KEY_ATTRIBUTES } from '../keys.ts';
import { queryAll, queryPage } from '../query-page.ts';
import { type AuthTable, epochSeconds, eventsTableOf, getItem } from './auth-table.ts';
import {
  invitationIndexKey,
  invitationKey,
  membershipIndexKey,
  membershipKey,
  teamInvitationsPartition,
  teamKey,
  teamMembersPartition,
  userKey,
} from './keys.ts';

/** A team holds at most this many members: every listing and admin count reads all of them. */
export const MAX_TEAM_MEMBERS = 1_000;
/** An invitation stays listed this long after it expired or ended, then TTL removes it. */
const ENDED_INVITATION_RETENTION_MS = 30 * 24 * 3600_000;
/** Keys of one BatchGetItem. */
const BATCH = 100;

function memberSchemas() {
  const membership: z.ZodMiniType<Membership> = z.object({
    userId: z.string(),
    teamId: z.string(),
    role: roleSchema,
    createdAt: z.string(),
  });
  const invitation: z.ZodMiniType<InvitationRecord> = z.object({
    invitationId: z.string(),
    teamId: z.string(),
    email: z.string(),
    role: roleSchema,
    invitedBy: z.string(),
    createdAt: z.string(),
    expiresAt: z.string(),
    status: z.enum(['pending', 'accepted', 'revoked']),
    acceptedAt: z.optional(z.string()),
    acceptedBy: z.optional(z.string()),
    revokedAt: z.optional(z.string()),
    revokedBy: z.optional(z.string()),
  });
  const team = z.object({ membersVersion: z.optional(z.number()) });
  return { membership, invitation, team };
}

type Schemas = ReturnType<typeof memberSchemas>;

/** DynamoDB adapter of MemberRepository. */
export function makeMemberStore(table: AuthTable): MemberRepository {
  const schemas = memberSchemas();
  return {
    listMembers: (teamId) => listMembers(table, schemas, teamId),
    setRole: (teamId, userId, role, version, event) =>
      changeMembership(table, teamId, userId, version, event, {
        Update: {
          TableName: table.tableName,
          Key: membershipKey(userId, teamId),
          UpdateExpression: 'SET #role = :role',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':role': role },
        },
      }),
    removeMember: (teamId, userId, version, event) =>
      changeMembership(table, teamId, userId, version, event, {
        Delete: {
          TableName: table.tableName,
          Key: membershipKey(userId, teamId),
          ConditionExpression: 'attribute_exists(pk)',
        },
      }),
    createInvitation: (invitation, event) => createInvitation(table, invitation, event),
    getInvitation: (invitationId) =>
      getItem(table, invitationKey(invitationId), schemas.invitation, 'invitation'),
    listInvitations: (teamId, page) =>
      queryPage(
        table.db,
        {
          tableName: table.tableName,
          indexName: 'gsi1',
          partition: { name: 'gsi1pk', value: teamInvitationsPartition(teamId) },
          cursorAttributes: KEY_ATTRIBUTES,
        },
        page,
        itemReader(schemas.invitation, 'invitation'),
      ),
    revokeInvitation: (invitationId, at, by, event) => revokeInvitation(table, invitationId, at, by, event),
    acceptInvitation: (invitationId, membership, at, event) =>
      acceptInvitation(table, invitationId, membership, at, event),
  };
}

async function listMembers(table: AuthTable, schemas: Schemas, teamId: string) {
  // The version first: a change that lands after this read makes the caller's write fail, never pass.
  const team = await getItem(table, teamKey(teamId), schemas.team, 'team');
  const indexed = await queryAll(
    table.db,
    {
      TableName: table.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': teamMembersPartition(teamId) },
      ProjectionExpression: 'userId',
      Limit: MAX_TEAM_MEMBERS,
    },
    (item) => String((item as { userId?: unknown }).userId),
  );
  const userIds = [...new Set(indexed)].slice(0, MAX_TEAM_MEMBERS);
  // The index may lag: each membership is read again from its item, strongly consistent.
  const items = await batchGetConsistent(
    table,
    userIds.flatMap((userId) => [membershipKey(userId, teamId), userKey(userId)]),
  );
  const byKey = new Map(items.map((item) => [`${item.pk}|${item.sk}`, item]));
  const readMembership = itemReader(schemas.membership, 'membership');
  const members: MemberRecord[] = [];
  for (const userId of userIds) {
    const m = membershipKey(userId, teamId);
    const u = userKey(userId);
    const membership = byKey.get(`${m.pk}|${m.sk}`);
    const user = byKey.get(`${u.pk}|${u.sk}`);
    if (!membership) continue;
    members.push({
      ...readMembership(membership),
      email: typeof user?.email === 'string' ? user.email : '',
      name: typeof user?.name === 'string' ? user.name : '',
    });
  }
  members.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.userId.localeCompare(b.userId));
  return { members, version: team?.membersVersion ?? 0 };
}

async function batchGetConsistent(table: AuthTable, keys: ItemKey[]): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (let at = 0; at < keys.length; at += BATCH) {
    let pending: Record<string, unknown>[] = keys.slice(at, at + BATCH).map((key) => ({ ...key }));
    for (let round = 0; pending.length > 0; round++) {
      if (round >= 8) throw new Error('DynamoDB left members unread; try again later.');
      const { Responses, UnprocessedKeys } = await table.db.send(
        new BatchGetCommand({
          RequestItems: {
            [table.tableName]: {
              Keys: pending,
              ConsistentRead: true,
              // Never a password hash: only what a member listing shows.
              ProjectionExpression: 'pk, sk, userId, teamId, #role, createdAt, email, #name',
              ExpressionAttributeNames: { '#role': 'role', '#name': 'name' },
            },
          },
        }),
      );
      found.push(...(Responses?.[table.tableName] ?? []));
      pending = (UnprocessedKeys?.[table.tableName]?.Keys ?? []) as Record<string, unknown>[];
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
    }
  }
  return found;
}

/** The team item's version condition and raise, as the first item of a membership change. */
function versionStep(tableName: string, teamId: string, version: number) {
  return {
    Update: {
      TableName: tableName,
      Key: teamKey(teamId),
      UpdateExpression: 'SET membersVersion = :next',
      ConditionExpression:
        'attribute_exists(pk) AND (membersVersion = :version OR (attribute_not_exists(membersVersion) AND :version = :zero))',
      ExpressionAttributeValues: { ':next': version + 1, ':version': version, ':zero': 0 },
    },
  };
}

async function changeMembership(
  table: AuthTable,
  teamId: string,
  userId: string,
  version: number,
  event: DomainEvent,
  step: Record<string, unknown>,
): Promise<void> {
  try {
    await table.db.send(
      new TransactWriteCommand({
        TransactItems: [
          versionStep(table.tableName, teamId, version),
          step,
          eventPut(eventsTableOf(table), event),
        ] as never,
      }),
    );
  } catch (error) {
    const failed = failedTransactionItems(error);
    if (failed.includes(0)) {
      throw new ConflictError("The team's members changed meanwhile; read them again and retry.");
    }
    if (failed.includes(1)) throw new NotFoundError(`User ${userId} is not a member of this team.`);
    throw error;
  }
}

async function createInvitation(table: AuthTable, invitation: InvitationRecord, event: DomainEvent) {
  await table.db.send(
    new TransactWriteCommand({
      TransactItems: [
        putNew(table.tableName, {
          ...invitationKey(invitation.invitationId),
          ...invitationIndexKey(invitation),
          expiresAtEpoch: epochSeconds(invitation.expiresAt, ENDED_INVITATION_RETENTION_MS),
          ...invitation,
        }),
        eventPut(eventsTableOf(table), event),
      ],
    }),
  );
}

async function revokeInvitation(
  table: AuthTable,
  invitationId: string,
  at: string,
  by: string,
  event: DomainEvent,
) {
  try {
    await table.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table.tableName,
              Key: invitationKey(invitationId),
              UpdateExpression: 'SET #status = :revoked, revokedAt = :at, revokedBy = :by',
              ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: {
                ':revoked': 'revoked',
                ':pending': 'pending',
                ':at': at,
                ':by': by,
              },
            },
          },
          eventPut(eventsTableOf(table), event),
        ],
      }),
    );
  } catch (error) {
    if (failedTransactionItems(error).includes(0)) {
      throw new ConflictError(`Invitation ${invitationId} is no longer pending (accepted or revoked).`);
    }
    throw error;
  }
}

async function acceptInvitation(
  table: AuthTable,
  invitationId: string,
  membership: Membership,
  at: string,
  event: DomainEvent,
): Promise<boolean> {
  const accept = {
    Update: {
      TableName: table.tableName,
      Key: invitationKey(invitationId),
      UpdateExpression: 'SET #status = :accepted, acceptedAt = :at, acceptedBy = :by',
      ConditionExpression: 'attribute_exists(pk) AND #status = :pending AND expiresAt > :at',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':accepted': 'accepted',
        ':pending': 'pending',
        ':at': at,
        ':by': membership.userId,
      },
    },
  };
  const join = putNew(table.tableName, {
    ...membershipKey(membership.userId, membership.teamId),
    ...membershipIndexKey(membership),
    ...membership,
  });
  const send = (items: unknown[]) =>
    table.db.send(new TransactWriteCommand({ TransactItems: items as never }));
  try {
    await send([accept, join, eventPut(eventsTableOf(table), event)]);
    return true;
  } catch (error) {
    const failed = failedTransactionItems(error);
    if (failed.includes(0)) return false;
    if (!failed.includes(1)) throw error;
  }
  // Already a member (added meanwhile): the invitation is used, the membership kept as it is.
  try {
    await send([accept]);
    return true;
  } catch (error) {
    if (failedTransactionItems(error).includes(0)) return false;
    throw error;
  }
}
