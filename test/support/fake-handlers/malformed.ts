/** Answers something that is not a Lambda proxy result (no statusCode). */
export const handler = async (): Promise<object> => ({ status: 'ok', body: { not: 'a string' } });
