/*
 * The real clock and id generator: the production adapters of the Clock and IdGenerator
 * ports (tests pass their own).
 */
import { nanoid } from 'nanoid';
import type { Clock, IdGenerator } from '../core/ports.ts';

export const systemClock: Clock = { now: () => new Date() };
export const nanoidGenerator: IdGenerator = { newId: () => nanoid() };
