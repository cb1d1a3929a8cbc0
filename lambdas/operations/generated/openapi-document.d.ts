// Types of the module lambdas/operations/openapi-build.ts writes next to this file (openapi-document.js, git-ignored).
export declare const OPENAPI_DOCUMENT: Record<string, unknown>;
