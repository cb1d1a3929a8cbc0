/**
 * Where a merged read's next round stops (store/merge-aim.ts estimatedPages), when records share a
 * millisecond: a source that stopped at its Limit goes on from a key inside that millisecond, and a
 * page bound behind that key is a Query DynamoDB refuses (an export answered 500).
 */
import { describe, expect, it } from 'vitest';
import { estimatedPages, type Source } from '../../../lambdas/store/merge-aim.ts';

const TIE = '2026-04-01T00:00:00.001Z';

/** A source read up to its Limit among records of one millisecond: it goes on after `<TIE>#<id>`. */
const stoppedInside = (id: string, items: number): Source => ({
  query: { base: { TableName: 't' }, partition: 'pk = :pk' },
  items: Array.from({ length: items }, (_, index) => ({ sk: `${TIE}#${id}${index}` })),
  last: `${TIE}#${id}${items - 1}`,
  start: { pk: id, sk: `${TIE}#${id}${items - 1}` },
  exhausted: false,
});

describe('a round after records that share one millisecond', () => {
  for (const ascending of [true, false]) {
    it(`bounds every page past its source's start key (${ascending ? 'oldest' : 'newest'} first)`, () => {
      // 33 sources, 6 items read from each, all in the millisecond: the rate says the rest of the
      // answer lies within a fraction of a millisecond.
      const open = Array.from({ length: 33 }, (_, source) => stoppedInside(`s${source}-`, 6));
      const keys = open.flatMap((source) => source.items.map((item) => String(item.sk)));

      for (const limit of [20, 199, 200, 210]) {
        const pages = estimatedPages(open, keys, Math.min(limit - 1, 5), {
          limit,
          ascending,
          stalls: 0,
          aim: 1,
          frugal: false,
        });
        for (const [source, page] of pages) {
          if (page.until === null) continue;
          const start = String(source.start?.sk);
          // The Query runs from the start key towards `until`: it must lie on the read's side of it.
          expect(ascending ? page.until > start : page.until < start).toBe(true);
        }
      }
    });
  }
});
