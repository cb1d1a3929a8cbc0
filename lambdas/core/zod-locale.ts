/*
 * English messages for zod/mini's issues, imported for its effect by the modules that validate
 * (see below for why by name).
 */
import { en } from 'zod/locales';
import { config } from 'zod/mini';

/**
 * zod/mini ships without a locale: every issue would read "Invalid input". The English one costs
 * about 3 KB of bundle. Imported for its effect by core/schemas/common.ts, which every Lambda reaches, and
 * by http/parse.ts, which turns issues into the `details` of a 400. Imported by name from
 * 'zod/locales': `z.locales.en` through the zod/mini namespace would bundle every locale (~250 KB).
 */
config(en());
