/** Names shared by the CDK stack and the local stack, in a module without CDK imports. */
export const SERVICE_NAME = 'pipeline-synthesis-api';

/** `get-synthesis-run` → `GetSynthesisRun`, `DEFAULT_4XX` → `Default4xx`: construct ids from declared names. */
export function pascalCase(name: string): string {
  return name
    .toLowerCase()
    .split(/[-_]/)
    .filter((part) => part.length > 0)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
