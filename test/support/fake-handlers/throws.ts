/** Fails the way a buggy handler does: an error whose message and stack must never reach a client. */
export const handler = async (): Promise<never> => {
  throw new Error('secret internals: table arn:aws:dynamodb:local:000000000000:table/hidden');
};
