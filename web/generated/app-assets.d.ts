// Types of the module web/build.ts writes next to this file (app-assets.js, git-ignored).
import type { AppAssets } from '../../lambdas/http/serve-app.ts';

export declare const APP_ASSETS: AppAssets;
