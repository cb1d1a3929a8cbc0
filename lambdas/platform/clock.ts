import { nanoid } from 'nanoid';
import type { Clock, IdGenerator } from '../core/ports.ts';

export const systemClock: Clock = { now: () => new Date() };
export const nanoidGenerator: IdGenerator = { newId: () => nanoid() };
