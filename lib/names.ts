/** Names shared by the CDK stack and the local stack, in a module without CDK imports. */
export const SERVICE_NAME = 'pipeline-synthesis-api';
