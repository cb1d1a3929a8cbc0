/*
 * People as names: what an answer shows beside each actor id (a user's email, an API token's
 * name), resolved for the whole answer at once through the PeopleDirectory, never one read per row.
 */
import type { Actor, DomainEvent } from './events.ts';
import type { PeopleDirectory } from './ports/people.ts';
import type { NamedActivation, NamedRollout, NamedRun } from './schemas/people.ts';
import type { Activation } from './schemas/pipelines.ts';
import type { Rollout } from './schemas/rollouts.ts';
import type { SynthesisRun } from './schemas/runs.ts';

/** The service's own actor id (a guardrail, the worker) and the name it is shown with. */
export const SYSTEM_ACTOR_ID = 'system';

/** Names of the ids one answer holds; null for an id whose record is gone. */
export interface Names {
  user(userId: string | null): string | null;
  token(tokenId: string): string | null;
}

const present = (ids: ReadonlyArray<string | null | undefined>) => [
  ...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== SYSTEM_ACTOR_ID)),
];

/** Looks up every user and token id of an answer in one go. */
export async function lookUpNames(
  directory: PeopleDirectory,
  teamId: string,
  userIds: ReadonlyArray<string | null | undefined>,
  tokenIds: ReadonlyArray<string | undefined> = [],
): Promise<Names> {
  const users = present(userIds);
  const tokens = present(tokenIds);
  const found =
    users.length + tokens.length === 0
      ? { users: new Map<string, string>(), tokens: new Map<string, string>() }
      : await directory.displayNames(teamId, { userIds: users, tokenIds: tokens });
  return {
    user: (userId) =>
      userId === null
        ? null
        : userId === SYSTEM_ACTOR_ID
          ? SYSTEM_ACTOR_ID
          : (found.users.get(userId) ?? null),
    token: (tokenId) => found.tokens.get(tokenId) ?? null,
  };
}

/** Runs with the names of who started, approved and rejected them (runs of one team). */
export async function nameRuns(directory: PeopleDirectory, runs: SynthesisRun[]): Promise<NamedRun[]> {
  const [first] = runs;
  if (!first) return [];
  const names = await lookUpNames(
    directory,
    first.teamId,
    runs.flatMap((run) => [run.triggeredBy, run.approvedBy, run.rejectedBy]),
  );
  return runs.map((run) => ({
    ...run,
    triggeredByName: names.user(run.triggeredBy),
    approvedByName: names.user(run.approvedBy),
    rejectedByName: names.user(run.rejectedBy),
  }));
}

/** One run, named. */
export async function nameRun(directory: PeopleDirectory, run: SynthesisRun): Promise<NamedRun> {
  const [named] = await nameRuns(directory, [run]);
  return named as NamedRun;
}

/** Activations with the name of who activated each. */
export async function nameActivations(
  directory: PeopleDirectory,
  teamId: string,
  activations: Activation[],
): Promise<NamedActivation[]> {
  const names = await lookUpNames(
    directory,
    teamId,
    activations.map((activation) => activation.activatedBy),
  );
  return activations.map((activation) => ({
    ...activation,
    activatedByName: names.user(activation.activatedBy),
  }));
}

/** A rollout with the names of who started and who ended it ("system" for a guardrail). */
export async function nameRollout(
  directory: PeopleDirectory,
  teamId: string,
  rollout: Rollout,
): Promise<NamedRollout> {
  const names = await lookUpNames(directory, teamId, [rollout.startedBy, rollout.endedBy]);
  return {
    ...rollout,
    startedByName: names.user(rollout.startedBy),
    endedByName: names.user(rollout.endedBy),
  };
}

/**
 * The name an actor is shown with: the person's email, with the API token's name when they acted
 * through one (`ada@example.com (API token "ci")`), or "system".
 */
export function actorName(names: Names, actor: Actor): string | null {
  if (actor.credential === 'system') return SYSTEM_ACTOR_ID;
  const person = names.user(actor.userId);
  if (actor.tokenId === undefined) return person;
  const token = names.token(actor.tokenId);
  if (token === null) return person;
  return `${person ?? 'a former member'} (API token "${token}")`;
}

/** Events (of one team) whose actor carries its name. */
export async function nameEvents(
  directory: PeopleDirectory,
  teamId: string,
  events: DomainEvent[],
): Promise<DomainEvent[]> {
  const actors = events.map((event) => event.data.actor);
  const names = await lookUpNames(
    directory,
    teamId,
    [...actors.map((actor) => actor.userId), ...events.map((event) => event.data.memberId)],
    actors.map((actor) => actor.tokenId),
  );
  return events.map((event) => ({
    ...event,
    data: {
      ...event.data,
      actor: { ...event.data.actor, name: actorName(names, event.data.actor) },
      ...(event.data.memberId ? { memberName: names.user(event.data.memberId) ?? 'a former member' } : {}),
    },
  }));
}
