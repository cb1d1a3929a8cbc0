/*
 * Lambda handler of GET /app and /app/{proxy+}: serves the review application from the
 * assets built into this function's bundle.
 */
import { APP_ASSETS } from '../../web/generated/app-assets.js';
import { httpHandler } from '../platform/http.ts';
import { makeServeApp } from '../platform/serve-app.ts';

// The application's files are built into this function's bundle (web/build.ts): the same code and
// the same files serve on AWS and in the local stack.
const serveApp = makeServeApp(APP_ASSETS);

/** GET /app, GET /app/{proxy+}: the review application's HTML shell and its hashed assets. */
export const handler = httpHandler(async (event) => serveApp(event));
