/**
 * The CLI's exit codes and the failures that map to them. Scripts rely on these numbers
 * (README, "From a script or CI"); nothing else may exit with them.
 */
export const EXIT = {
  ok: 0,
  /** A usage error (bad command, option or file) or the API could not be reached. */
  usage: 1,
  /** The API answered 4xx or 5xx; its `{error, message}` went to stderr. */
  api: 2,
  /** `--wait` ended with the run `failed`. */
  runFailed: 3,
  /** `--wait` gave up after `--timeout` seconds; the run goes on. */
  timedOut: 4,
  /** `evaluate`: a case passed on the base and failed on the proposal. */
  regressed: 5,
  /** Ctrl-C stopped the waiting, or `evaluate` after posting what finished (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const;

/** A failure the CLI explains in one line on stderr and turns into its exit code. */
export class CliFailure extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

export class UsageFailure extends CliFailure {
  constructor(message: string) {
    super(EXIT.usage, message);
  }
}

/** The API answered with an error status. */
export class ApiFailure extends CliFailure {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly apiMessage: string,
    /** Seconds from a Retry-After header, when the API sent one. */
    readonly retryAfterSeconds: number | undefined,
    /** VALIDATION_ERROR's `details`: what is wrong, by path. */
    readonly details?: unknown,
  ) {
    super(EXIT.api, `${status} ${code}: ${apiMessage}${detailLines(details)}`);
  }
}

function detailLines(details: unknown): string {
  if (!Array.isArray(details)) return '';
  return details
    .map((detail) => {
      const { path, message } = (detail ?? {}) as { path?: unknown; message?: unknown };
      return `\n  ${typeof path === 'string' && path ? `${path}: ` : ''}${String(message ?? JSON.stringify(detail))}`;
    })
    .join('');
}
