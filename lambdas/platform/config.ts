import { z } from 'zod';

/**
 * Reads and validates environment variables once, at module load, so a Lambda with a missing
 * setting fails its first invocation loudly instead of misbehaving later.
 */
export function readConfig<T extends z.ZodRawShape>(shape: T): z.infer<z.ZodObject<T>> {
  const result = z.object(shape).safeParse(process.env);
  if (!result.success) {
    const names = result.error.issues.map((issue) => issue.path.join('.')).join(', ');
    throw new Error(`Missing or invalid environment variables: ${names}`);
  }
  return result.data;
}

export const tableName = z.string().min(1);
