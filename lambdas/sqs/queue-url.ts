/*
 * The SQS queue URL setting, in a module of its own: a Lambda that reads the setting at init but
 * calls SQS only now and then (the synthesis worker, on a retry) loads the SQS client on demand.
 */
import * as z from 'zod/mini';

/**
 * The SQS queue URL setting. It lives apart from the table settings in repositories.ts: a
 * module-level schema is bundled (and built at cold start) by every Lambda importing its module,
 * and the URL format check costs about 2 KB that only the Lambdas sending jobs need.
 */
export const queueUrl = /* @__PURE__ */ z.url();
