/**
 * Writes draft-json-schema.json, the `submit_synthesis` tool's input schema, from the zod draft
 * schema (lambdas/synthesis/draft.ts): `npx tsx lambdas/synthesis/claude/write-draft-json-schema.ts`
 * (then `npm run format`) after changing the draft. The tool reads the file instead of calling z.toJSONSchema at run time:
 * zod's JSON Schema generator (about 20 KB) would otherwise be bundled into the part of the worker
 * every job loads (esbuild places zod's modules, reached by both, in a chunk they share).
 * test/unit/synthesis/prompt.test.ts fails while the file and the schema differ.
 */
import { writeFile } from 'node:fs/promises';
import { synthesisDraftJsonSchema } from '../draft.ts';

await writeFile(
  new URL('./draft-json-schema.json', import.meta.url),
  `${JSON.stringify(synthesisDraftJsonSchema(), null, 2)}\n`,
);
