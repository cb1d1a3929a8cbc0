/**
 * The CLI's commands about people and their own changes: `members list|invite|set-role|remove`
 * (the team the credential acts for, or `--team`), `invitations list|revoke`, and `propose
 * <pipelineId> --file changes.json` (changes made by hand, as a run to evaluate and approve).
 */
import type { Command } from 'commander';
import { call } from './api.ts';
import { type Context, contextOf, type Io } from './context.ts';
import { UsageFailure } from './failures.ts';
import { readJsonObject } from './records.ts';
import { fields, renderRun, table } from './render.ts';

const ROLES = ['admin', 'member', 'viewer'] as const;
type Role = (typeof ROLES)[number];

const parseRole = (value: string): Role => {
  if (!(ROLES as readonly string[]).includes(value))
    throw new Error(`the role must be one of ${ROLES.join(', ')}`);
  return value as Role;
};

/**
 * The team a members command is about: `--team` (an id or a name of one of the user's teams, as
 * `me` lists them), else the team the credential acts for.
 */
export async function teamOf(
  context: Context,
  wanted: string | undefined,
): Promise<{ id: string; name: string }> {
  const me = await call(context.client.GET('/me'), context.apiUrl);
  const current = me.teams.find((team) => team.id === me.authentication.teamId);
  if (wanted === undefined)
    return { id: me.authentication.teamId, name: current?.name ?? me.authentication.teamId };
  const matches = me.teams.filter((team) => team.id === wanted || team.name === wanted);
  if (matches.length !== 1) {
    throw new UsageFailure(
      matches.length === 0
        ? `--team ${wanted} is none of your teams (${me.teams.map((team) => `${team.name} ${team.id}`).join(', ')}).`
        : `--team ${wanted} names ${matches.length} teams; pass the id.`,
    );
  }
  const team = matches[0] as { id: string; name: string };
  if (team.id !== me.authentication.teamId) {
    throw new UsageFailure(
      `This credential acts for ${current?.name ?? me.authentication.teamId}, not ${team.name}: a credential belongs to one team. ` +
        `Use a token of ${team.name} (--token, or tokens create --team ${team.id} from a session of it).`,
    );
  }
  return team;
}

export function addMemberCommands(program: Command, io: Io): void {
  addMembersGroup(program, io);
  addInvitationsGroup(program, io);
  addProposeCommand(program, io);
}

function addMembersGroup(program: Command, io: Io): void {
  const members = program.command('members').description("the team's people and their roles");
  members
    .command('list')
    .description('members with their names and roles, oldest first')
    .action(async (_options, command: Command) => {
      const context = contextOf(io, command);
      const team = await teamOf(context, context.team);
      const page = await call(
        context.client.GET('/teams/{teamId}/members', { params: { path: { teamId: team.id } } }),
        context.apiUrl,
      );
      context.print(page, () =>
        table(
          page.items.map((member) => ({ ...member, joinedAt: member.joinedAt.slice(0, 10) })),
          ['email', 'name', 'role', 'joinedAt', 'userId'],
        ),
      );
    });
  members
    .command('invite')
    .description('email a sign-in link that adds the address to the team (admins; valid once, 7 days)')
    .argument('<email>')
    .requiredOption('--role <role>', `${ROLES.join(' | ')}`, parseRole)
    .action(async (email: string, options: { role: Role }, command: Command) => {
      const context = contextOf(io, command);
      const team = await teamOf(context, context.team);
      const invitation = await call(
        context.client.POST('/teams/{teamId}/invitations', {
          params: { path: { teamId: team.id } },
          body: { email, role: options.role },
        }),
        context.apiUrl,
      );
      context.print(
        invitation,
        () =>
          `Invited ${invitation.email} to ${team.name} as ${invitation.role}: the link in their email works once, until ${invitation.expiresAt}.\n` +
          `Withdraw it with: pipeline-synthesis invitations revoke ${invitation.id}`,
      );
    });
  members
    .command('set-role')
    .description("change a member's role (admins; the last admin stays one)")
    .argument('<userIdOrEmail>')
    .argument('<role>', ROLES.join(' | '), parseRole)
    .action(async (who: string, role: Role, _options, command: Command) => {
      const context = contextOf(io, command);
      const { team, userId } = await memberOf(context, who);
      const member = await call(
        context.client.PATCH('/teams/{teamId}/members/{userId}', {
          params: { path: { teamId: team.id, userId } },
          body: { role },
        }),
        context.apiUrl,
      );
      context.print(member, () => `${member.email} is now ${member.role} in ${team.name}.`);
    });
  members
    .command('remove')
    .description(
      'remove a member: their sessions for the team end and the API tokens they created in it are revoked',
    )
    .argument('<userIdOrEmail>')
    .action(async (who: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const { team, userId, email } = await memberOf(context, who);
      await call(
        context.client.DELETE('/teams/{teamId}/members/{userId}', {
          params: { path: { teamId: team.id, userId } },
        }),
        context.apiUrl,
      );
      context.print(
        undefined,
        () => `Removed ${email} from ${team.name}; their sessions and API tokens of it no longer work.`,
      );
    });
}

/** A member named by user id or email, as `members list` shows them. */
async function memberOf(context: Context, who: string) {
  const team = await teamOf(context, context.team);
  const page = await call(
    context.client.GET('/teams/{teamId}/members', { params: { path: { teamId: team.id } } }),
    context.apiUrl,
  );
  const member = page.items.find((item) => item.userId === who || item.email === who.toLowerCase());
  if (!member) throw new UsageFailure(`${who} is not a member of ${team.name} (see members list).`);
  return { team, userId: member.userId, email: member.email };
}

function addInvitationsGroup(program: Command, io: Io): void {
  const invitations = program.command('invitations').description("the team's invitations (admins)");
  invitations
    .command('list')
    .description('invitations, newest first')
    .action(async (_options, command: Command) => {
      const context = contextOf(io, command);
      const team = await teamOf(context, context.team);
      const page = await call(
        context.client.GET('/teams/{teamId}/invitations', { params: { path: { teamId: team.id } } }),
        context.apiUrl,
      );
      context.print(page, () =>
        table(
          page.items.map((item) => ({ ...item, status: item.expired ? 'expired' : item.status })),
          ['id', 'email', 'role', 'status', 'expiresAt'],
        ),
      );
    });
  invitations
    .command('revoke')
    .description('withdraw a pending invitation: its link stops working')
    .argument('<invitationId>')
    .action(async (invitationId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const team = await teamOf(context, context.team);
      await call(
        context.client.DELETE('/teams/{teamId}/invitations/{invitationId}', {
          params: { path: { teamId: team.id, invitationId } },
        }),
        context.apiUrl,
      );
      context.print(undefined, () => `Revoked invitation ${invitationId}.`);
    });
}

function addProposeCommand(program: Command, io: Io): void {
  program
    .command('propose')
    .description(
      'propose changes by hand: {"changes": [{slotId, description, rationale?, patch}], "note"?} becomes a generated run to evaluate and approve',
    )
    .argument('<pipelineId>')
    .requiredOption('--file <file>', 'the changes as JSON (- for stdin)')
    .action(async (pipelineId: string, options: { file: string }, command: Command) => {
      const context = contextOf(io, command);
      const body = readJsonObject(options.file) as never;
      const run = await call(
        context.client.POST('/pipelines/{pipelineId}/proposals', { params: { path: { pipelineId } }, body }),
        context.apiUrl,
      );
      context.print(run, () =>
        [
          renderRun(run, context.palette),
          fields({ next: `pipeline-synthesis evaluate ${run.id} --exec "…" · approve ${run.id}` }),
        ].join('\n\n'),
      );
    });
}
