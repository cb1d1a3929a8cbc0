/**
 * Who is signed in, for the pages: the session the application frame (app.tsx) provides once
 * GET /me answered, and the hook a page reads it with. A module of its own, so that the pages and
 * the frame that routes to them do not import each other.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me, Role } from './types.ts';

export interface Session {
  me: Me;
  role: Role;
  teamId: string;
  teamName: string;
  canWrite: boolean;
}

export const SessionContext = createContext<Session | null>(null);

/** The signed-in person's session; only a page under the frame's provider may ask. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

/** The session of GET /me's answer: its team, the role there, and whether that role may write. */
export function sessionOf(me: Me): Session {
  const { teamId, role } = me.authentication;
  const teamName = me.teams.find((team) => team.id === teamId)?.name ?? teamId;
  return { me, role, teamId, teamName, canWrite: role !== 'viewer' };
}
