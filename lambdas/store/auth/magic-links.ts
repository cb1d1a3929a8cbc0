/*
 * Magic links in the auth table, by the SHA-256 of their token, each usable once (a conditional
 * delete): the magic-link part of AuthRepository.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { AuthRepository, MagicLinkRecord } from '../../auth/ports.ts';
import { isConditionFailure } from '../conditions.ts';
import { parseItem } from '../items.ts';
import { type AuthTable, epochSeconds } from './auth-table.ts';
import { magicLinkKey } from './keys.ts';

export type MagicLinkStore = Pick<AuthRepository, 'createMagicLink' | 'consumeMagicLink'>;

/** DynamoDB adapter of the magic-link part of AuthRepository. */
export function makeMagicLinkStore({ db, tableName }: AuthTable): MagicLinkStore {
  // Built here, not at module level, so that only the Lambdas that use the store bundle it.
  const magicLinkSchema: z.ZodMiniType<MagicLinkRecord> = z.object({
    tokenHash: z.string(),
    userId: z.string(),
    // Links sent before links carried it were sent under version 0; they expire within 15 minutes.
    credentialsVersion: z._default(z.number(), 0),
    createdAt: z.string(),
    expiresAt: z.string(),
    invitationId: z.optional(z.string()),
  });
  return {
    async createMagicLink(link) {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...magicLinkKey(link.tokenHash),
            expiresAtEpoch: epochSeconds(link.expiresAt),
            ...link,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    },

    async consumeMagicLink(tokenHash) {
      try {
        // The delete is the one-time check: of two concurrent verifications only one gets the item.
        const { Attributes } = await db.send(
          new DeleteCommand({
            TableName: tableName,
            Key: magicLinkKey(tokenHash),
            ConditionExpression: 'attribute_exists(pk)',
            ReturnValues: 'ALL_OLD',
          }),
        );
        return Attributes ? parseItem(magicLinkSchema, Attributes, 'magic link') : null;
      } catch (error) {
        if (isConditionFailure(error)) return null;
        throw error;
      }
    },
  };
}
