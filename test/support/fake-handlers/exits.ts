/** Ends its own execution environment in the middle of a request. */
export const handler = async (): Promise<never> => {
  process.exit(1);
};
