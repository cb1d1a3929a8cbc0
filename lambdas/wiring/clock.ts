/*
 * The real clock and id generator: the production adapters of the Clock and IdGenerator
 * ports (tests pass their own).
 */
import { nanoid } from 'nanoid';
import type { Clock, IdGenerator } from '../core/ports/common.ts';

export const systemClock: Clock = { now: () => new Date() };

/**
 * A 21-character nanoid that starts with a letter or digit. One in 32 nanoids starts with `-` or
 * `_`; an id starting with `-` reads as an option to a command line (`pipeline-synthesis signals
 * add -x3…` fails with "unknown option"), so such a draw is made again.
 */
export function newId(draw: () => string = nanoid): string {
  for (;;) {
    const id = draw();
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}

export const nanoidGenerator: IdGenerator = { newId: () => newId() };
