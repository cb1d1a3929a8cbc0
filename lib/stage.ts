import { RemovalPolicy } from 'aws-cdk-lib';

export type StageName = 'dev' | 'prod';

export interface StageSettings {
  readonly name: StageName;
  /** RETAIN in prod so deleting the stack never deletes data; DESTROY in dev. */
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
}

export function stageSettings(name: string): StageSettings {
  if (name === 'prod') return { name, removalPolicy: RemovalPolicy.RETAIN, deletionProtection: true };
  if (name === 'dev') return { name, removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false };
  throw new Error(`Unknown stage '${name}': use -c stage=dev or -c stage=prod.`);
}
