import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { beforeAll, describe, expect, it } from 'vitest';
import { INVITATION_LIFETIME_MS, makeInviteMember } from '../../../lambdas/auth/invitations.ts';
import { makeMemberStore } from '../../../lambdas/store/auth/members.ts';
import { nanoidGenerator } from '../../../lambdas/wiring/clock.ts';
import { makeAuthRepository } from '../../../lambdas/wiring/repositories.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import {
  APP_URL,
  createUserWithPassword,
  freshAuthorizer,
  setUpAuthEnvironment,
  TestGateway,
  type TestUser,
} from './gateway.ts';

/*
 * A team's people through the real handlers and authorizer: invitations by email (the link read
 * from the outbox), accepting one creates or reuses the account, roles, removal, and every refusal.
 */

let db: DynamoDBDocumentClient;
let names: TableNames;
let outbox: string;
let gateway: TestGateway;
let admin: TestUser;
let outsider: TestUser;

beforeAll(async () => {
  ({ db, names, outbox } = await setUpAuthEnvironment());
  [admin, outsider] = await Promise.all([
    createUserWithPassword(db, names),
    createUserWithPassword(db, names),
  ]);
  gateway = new TestGateway();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const freshAddress = () =>
  `${nanoid(10)
    .replace(/[^A-Za-z0-9]/g, 'x')
    .toLowerCase()}@example.test`;

function invite(token: string, teamId: string, body: object) {
  return gateway.call({
    method: 'POST',
    resource: '/teams/{teamId}/invitations',
    pathParameters: { teamId },
    headers: bearer(token),
    body,
  });
}

/** The token of the newest email to `email`, read from its outbox file as the person would. */
async function linkTokenTo(email: string): Promise<string> {
  const file = (await readdir(outbox))
    .sort()
    .filter((name) => name.endsWith(`-${email}.txt`))
    .at(-1);
  if (!file) throw new Error(`No email to ${email}`);
  const text = await readFile(path.join(outbox, file), 'utf8');
  const link = /https?:\/\/\S+/.exec(text)?.[0];
  if (!link) throw new Error('No link in the email');
  expect(link.startsWith(`${APP_URL}/auth/magic-link?token=`)).toBe(true);
  return new URL(link).searchParams.get('token') ?? '';
}

function verify(token: string) {
  return gateway.call({
    method: 'POST',
    resource: '/auth/magic-link/verify',
    body: { token, delivery: 'body' },
  });
}

/** Invites a new address as `role` and signs the person in through the emailed link. */
async function joinAs(role: 'member' | 'viewer' | 'admin', email = freshAddress()) {
  const invited = await invite(admin.apiToken, admin.teamId, { email, role });
  expect(invited.status).toBe(201);
  const session = await verify(await linkTokenTo(email));
  expect(session.status).toBe(200);
  return {
    email,
    accessToken: session.body.accessToken as string,
    userId: session.body.session.userId as string,
  };
}

function me(token: string, g = gateway) {
  return g.call({ method: 'GET', resource: '/me', headers: bearer(token) });
}

function members(token: string, teamId: string) {
  return gateway.call({
    method: 'GET',
    resource: '/teams/{teamId}/members',
    pathParameters: { teamId },
    headers: bearer(token),
  });
}

function setRole(token: string, teamId: string, userId: string, role: string) {
  return gateway.call({
    method: 'PATCH',
    resource: '/teams/{teamId}/members/{userId}',
    pathParameters: { teamId, userId },
    headers: bearer(token),
    body: { role },
  });
}

function remove(token: string, teamId: string, userId: string) {
  return gateway.call({
    method: 'DELETE',
    resource: '/teams/{teamId}/members/{userId}',
    pathParameters: { teamId, userId },
    headers: bearer(token),
  });
}

describe('invitations', () => {
  it('an invited address gets a link that creates the account, adds it to the team and signs it in', async () => {
    const email = freshAddress();
    const invited = await invite(admin.apiToken, admin.teamId, {
      email: email.toUpperCase(),
      role: 'member',
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ email, role: 'member', status: 'pending', expired: false });
    expect(Date.parse(invited.body.expiresAt) - Date.parse(invited.body.createdAt)).toBe(
      INVITATION_LIFETIME_MS,
    );

    const session = await verify(await linkTokenTo(email));
    expect(session.status).toBe(200);
    expect(session.body.session).toMatchObject({ teamId: admin.teamId, role: 'member' });
    const who = await me(session.body.accessToken);
    expect(who.body.user.email).toBe(email);
    expect(who.body.teams).toEqual([expect.objectContaining({ id: admin.teamId, role: 'member' })]);

    const listed = await members(admin.apiToken, admin.teamId);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ email: admin.email, role: 'admin' }),
        expect.objectContaining({ email, role: 'member', name: email.split('@')[0] }),
      ]),
    );
  });

  it('answers alike for an address with an account; accepting adds the existing account, with both teams in /me', async () => {
    const forNew = await invite(admin.apiToken, admin.teamId, { email: freshAddress(), role: 'viewer' });
    const forExisting = await invite(admin.apiToken, admin.teamId, { email: outsider.email, role: 'viewer' });
    expect(forExisting.status).toBe(forNew.status);
    expect(Object.keys(forExisting.body).sort()).toEqual(Object.keys(forNew.body).sort());
    expect(JSON.stringify(forExisting.body)).not.toContain(outsider.userId);

    const session = await verify(await linkTokenTo(outsider.email));
    expect(session.body.session).toMatchObject({
      userId: outsider.userId,
      teamId: admin.teamId,
      role: 'viewer',
    });
    const who = await me(session.body.accessToken);
    expect(who.body.teams).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: admin.teamId, role: 'viewer' }),
        expect.objectContaining({ id: outsider.teamId, role: 'admin' }),
      ]),
    );
  });

  it('a link works once; a revoked or expired invitation signs no one in', async () => {
    const email = freshAddress();
    await invite(admin.apiToken, admin.teamId, { email, role: 'member' });
    const token = await linkTokenTo(email);
    expect((await verify(token)).status).toBe(200);
    const again = await verify(token);
    expect(again.status).toBe(401);
    expect(again.body.message).toMatch(/invalid, already used or expired/);

    const revokedEmail = freshAddress();
    const revoked = await invite(admin.apiToken, admin.teamId, { email: revokedEmail, role: 'member' });
    const withdrawn = await gateway.call({
      method: 'DELETE',
      resource: '/teams/{teamId}/invitations/{invitationId}',
      pathParameters: { teamId: admin.teamId, invitationId: revoked.body.id },
      headers: bearer(admin.apiToken),
    });
    expect(withdrawn.status).toBe(204);
    expect((await verify(await linkTokenTo(revokedEmail))).status).toBe(401);

    // Sent eight days ago: past its seven.
    const expiredEmail = freshAddress();
    const eightDaysAgo = { now: () => new Date(Date.now() - 8 * 24 * 3600_000) };
    const captured: string[] = [];
    const withOutbox = makeInviteMember({
      auth: makeAuthRepository(db, names.Auth, names.Events),
      members: makeMemberStore({ db, tableName: names.Auth, eventsTable: names.Events }),
      clock: eightDaysAgo,
      ids: nanoidGenerator,
      email: () => ({ send: async ({ text }) => void captured.push(text) }),
      appUrl: () => APP_URL,
      pagePath: '/auth/magic-link',
      audit: { info: () => {}, warn: () => {} },
    });
    const principal = {
      principalId: admin.userId,
      userId: admin.userId,
      teamId: admin.teamId,
      role: 'admin' as const,
      method: 'api-token' as const,
    };
    await withOutbox(principal, admin.teamId, { email: expiredEmail, role: 'member' });
    const expiredToken =
      new URL(/https?:\/\/\S+/.exec(captured[0] ?? '')?.[0] ?? '').searchParams.get('token') ?? '';
    expect((await verify(expiredToken)).status).toBe(401);

    const listed = await gateway.call({
      method: 'GET',
      resource: '/teams/{teamId}/invitations',
      pathParameters: { teamId: admin.teamId },
      headers: bearer(admin.apiToken),
    });
    const byEmail = new Map(listed.body.items.map((item: { email: string }) => [item.email, item]));
    expect(byEmail.get(email)).toMatchObject({ status: 'accepted' });
    expect(byEmail.get(revokedEmail)).toMatchObject({ status: 'revoked' });
    expect(byEmail.get(expiredEmail)).toMatchObject({ status: 'pending', expired: true });
  });

  it('refuses a non-admin, another team, a member already in the team and a malformed address', async () => {
    const member = await joinAs('member');
    const byMember = await invite(member.accessToken, admin.teamId, {
      email: freshAddress(),
      role: 'viewer',
    });
    expect(byMember.status).toBe(403);
    expect(byMember.body.message).toMatch(/Only an admin/);
    const elsewhere = await invite(outsider.apiToken, admin.teamId, {
      email: freshAddress(),
      role: 'viewer',
    });
    expect(elsewhere.status).toBe(403);
    expect((await members(outsider.apiToken, admin.teamId)).status).toBe(403);
    const twice = await invite(admin.apiToken, admin.teamId, { email: member.email, role: 'viewer' });
    expect(twice.status).toBe(409);
    const malformed = await invite(admin.apiToken, admin.teamId, { email: 'not an address', role: 'boss' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('VALIDATION_ERROR');
  });
});

describe('roles and removal', () => {
  it('a role change applies to the next request; a non-admin or another team cannot change roles', async () => {
    const member = await joinAs('member');
    const changed = await setRole(admin.apiToken, admin.teamId, member.userId, 'viewer');
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ userId: member.userId, role: 'viewer', email: member.email });
    expect((await me(member.accessToken)).body.authentication.role).toBe('viewer');
    const create = await gateway.call({
      method: 'POST',
      resource: '/pipelines',
      headers: bearer(member.accessToken),
      body: { name: 'p', slots: [{ id: 's', name: 's', kind: 'prompt', settings: {} }] },
    });
    expect(create.status).toBe(403);

    expect((await setRole(member.accessToken, admin.teamId, admin.userId, 'viewer')).status).toBe(403);
    expect((await setRole(outsider.apiToken, admin.teamId, member.userId, 'admin')).status).toBe(403);
    expect((await setRole(admin.apiToken, admin.teamId, 'nobodyAtAll', 'admin')).status).toBe(404);
  });

  it('never leaves a team without an admin', async () => {
    const demoted = await setRole(admin.apiToken, admin.teamId, admin.userId, 'member');
    expect(demoted.status).toBe(409);
    expect(demoted.body.message).toMatch(/at least one admin/);
    const removed = await remove(admin.apiToken, admin.teamId, admin.userId);
    expect(removed.status).toBe(409);
    // With a second admin, one of them may step down; then the other is the last again.
    const second = await joinAs('admin');
    expect((await setRole(second.accessToken, admin.teamId, second.userId, 'member')).status).toBe(200);
    expect((await setRole(admin.apiToken, admin.teamId, admin.userId, 'viewer')).status).toBe(409);
  });

  it("a removed member's session ends at once and the API tokens they created in the team are revoked", async () => {
    const member = await joinAs('member');
    const created = await gateway.call({
      method: 'POST',
      resource: '/api-tokens',
      headers: bearer(member.accessToken),
      body: { name: 'laptop', teamId: admin.teamId },
    });
    expect(created.status).toBe(201);
    expect((await me(created.body.token)).status).toBe(200);

    expect((await remove(outsider.apiToken, admin.teamId, member.userId)).status).toBe(403);
    expect((await remove(admin.apiToken, admin.teamId, member.userId)).status).toBe(204);

    expect((await me(member.accessToken)).status).toBe(401);
    // A new authorizer container (no cache: what any container sees within 60 s).
    const later = gateway.withAuthorizer(await freshAuthorizer(db, names));
    expect((await me(created.body.token, later)).status).toBe(401);
    const auth = makeAuthRepository(db, names.Auth, names.Events);
    expect((await auth.getApiToken(created.body.id))?.revokedAt).toEqual(expect.any(String));
    const sessions = await Promise.all(
      (await auth.listActiveSessionIdsOfUser(member.userId)).map((id) => auth.getSession(id)),
    );
    expect(sessions.filter((session) => session?.teamId === admin.teamId)).toEqual([]);

    const listed = await members(admin.apiToken, admin.teamId);
    expect(listed.body.items.map((item: { userId: string }) => item.userId)).not.toContain(member.userId);
    expect((await remove(admin.apiToken, admin.teamId, member.userId)).status).toBe(404);
  });

  it('every change is in the audit log with the person it is about', async () => {
    const audit = await gateway.call({
      method: 'GET',
      resource: '/audit-events',
      headers: bearer(admin.apiToken),
      query: { limit: '100' },
    });
    const types = new Set(audit.body.items.map((event: { type: string }) => event.type));
    const removal = audit.body.items.find((event: { type: string }) => event.type === 'member.removed');
    expect(removal.data.memberName).toMatch(/@example\.test$/);
    expect(removal.data.actor.name).toBe(`${admin.email} (API token "bootstrap")`);
    for (const type of [
      'member.invited',
      'member.joined',
      'member.role_changed',
      'member.removed',
      'invitation.revoked',
    ]) {
      expect(types).toContain(type);
    }
  });
});
