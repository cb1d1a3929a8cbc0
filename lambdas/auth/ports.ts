import type { Role } from '../core/principal.ts';

export interface Team {
  teamId: string;
  name: string;
  createdAt: string;
}

export interface User {
  userId: string;
  email: string;
  name: string;
  createdAt: string;
  /** scrypt hash (auth/password.ts); absent for users who only use magic links. */
  passwordHash?: string;
}

export interface Membership {
  userId: string;
  teamId: string;
  role: Role;
  createdAt: string;
}

/** An API token as stored: never the secret, only its SHA-256 and a hint. */
export interface ApiTokenRecord {
  tokenId: string;
  tokenHash: string;
  userId: string;
  teamId: string;
  name: string;
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface AuthRepository {
  createTeam(team: Team): Promise<void>;
  /** Creates the user; an email already in use is a ConflictError. */
  createUser(user: User): Promise<void>;
  getUser(userId: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  putMembership(membership: Membership): Promise<void>;
  getMembership(userId: string, teamId: string): Promise<Membership | null>;
  /** The user's teams with their names. */
  listTeamsOfUser(userId: string): Promise<Array<Membership & { teamName: string }>>;
  createApiToken(token: ApiTokenRecord): Promise<void>;
  findApiTokenByHash(tokenHash: string): Promise<ApiTokenRecord | null>;
}
