/**
 * The stacks with `-c modelProvider=bedrock`: the worker's role may call bedrock:InvokeModel on the
 * inference profile and the foundation models it routes to, and nothing else of Bedrock; no
 * Anthropic key secret exists or is readable; the worker and the start function are told the model.
 */
import { describe, expect, it } from 'vitest';
import { SYNTHESIS_WORKER } from '../../lambdas/functions.ts';
import { GEOGRAPHY_REGIONS, modelAccessSettings } from '../../lib/model-access.ts';
import {
  actionsOf,
  buildStacks,
  type CfnResource,
  logicalIdOf,
  type PolicyStatement,
  policyStatements,
  templatesOf,
  testApp,
} from './helpers.ts';

function synthesize(context: Parameters<typeof modelAccessSettings>[0]) {
  const stacks = buildStacks(testApp(), 'Bedrock', { stage: 'dev', model: modelAccessSettings(context) });
  const resources = Object.assign(
    {},
    ...templatesOf(stacks).map(({ template }) => (template.toJSON() as { Resources: object }).Resources),
  ) as Record<string, CfnResource>;
  const worker = stacks.service.jobs.functions.get(SYNTHESIS_WORKER.entry);
  if (!worker) throw new Error('no worker');
  const policies = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::IAM::Policy');
  const statements = (roleId?: string): PolicyStatement[] =>
    policies
      .filter(
        ([, policy]) => roleId === undefined || JSON.stringify(policy.Properties?.Roles).includes(roleId),
      )
      .flatMap(([, policy]) => policyStatements(policy));
  const workerFunction = resources[logicalIdOf(worker.function)];
  return { stacks, resources, worker, statements, workerFunction };
}

/** A resource of a statement with CDK's pseudo parameters written as <AWS::…>. */
function arnText(resource: unknown): string {
  if (typeof resource === 'string') return resource;
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) return JSON.stringify(resource);
  return join[1]
    .map((part) => (typeof part === 'string' ? part : `<${(part as { Ref: string }).Ref}>`))
    .join(join[0]);
}

/** The worker's environment variables as the template sets them. */
const workerEnvironment = (built: { workerFunction: CfnResource | undefined }): Record<string, unknown> =>
  (built.workerFunction?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
    ?.Variables ?? {};

const bedrockStatements = (statements: PolicyStatement[]) =>
  statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('bedrock:')));

describe('modelProvider=bedrock', () => {
  it('grants the worker bedrock:InvokeModel on the profile and its US models, and no other Bedrock action to anyone', () => {
    const built = synthesize({
      modelProvider: 'bedrock',
      bedrockModelId: 'us.anthropic.claude-sonnet-4-6-v1:0',
    });
    const workerRole = logicalIdOf(built.worker.role);

    const everyone = bedrockStatements(built.statements());
    const worker = bedrockStatements(built.statements(workerRole));

    expect(everyone).toEqual(worker);
    expect(worker).toHaveLength(1);
    expect(worker[0]?.Effect).toBe('Allow');
    expect(actionsOf(worker[0] as PolicyStatement)).toEqual(['bedrock:InvokeModel']);
    expect(([worker[0]?.Resource].flat() as unknown[]).map(arnText)).toEqual([
      'arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/us.anthropic.claude-sonnet-4-6-v1:0',
      'arn:<AWS::Partition>:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6-v1:0',
      'arn:<AWS::Partition>:bedrock:us-east-2::foundation-model/anthropic.claude-sonnet-4-6-v1:0',
      'arn:<AWS::Partition>:bedrock:us-west-2::foundation-model/anthropic.claude-sonnet-4-6-v1:0',
    ]);
  });

  it('grants a plain model id in the stack’s region alone, and a global profile its regionless models', () => {
    const plain = synthesize({ modelProvider: 'bedrock', bedrockModelId: 'anthropic.claude-haiku-4-5-v1:0' });
    const global = synthesize({
      modelProvider: 'bedrock',
      bedrockModelId: 'global.anthropic.claude-sonnet-4-6-v1:0',
    });

    const resourcesOf = (built: ReturnType<typeof synthesize>) =>
      bedrockStatements(built.statements()).flatMap((statement) => [statement.Resource].flat().map(arnText));
    expect(resourcesOf(plain)).toEqual([
      'arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/anthropic.claude-haiku-4-5-v1:0',
    ]);
    expect(resourcesOf(global)).toEqual([
      'arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/global.anthropic.claude-sonnet-4-6-v1:0',
      'arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/anthropic.claude-sonnet-4-6-v1:0',
      'arn:<AWS::Partition>:bedrock:::foundation-model/anthropic.claude-sonnet-4-6-v1:0',
    ]);
  });

  it('creates no Anthropic key secret, grants no secret read for the model, and tells the worker and the start function the model', () => {
    const built = synthesize({
      modelProvider: 'bedrock',
      bedrockModelId: 'eu.anthropic.claude-sonnet-4-6-v1:0',
    });

    expect(built.stacks.stateful.stateful.anthropicApiKey).toBeUndefined();
    const secrets = Object.values(built.resources).filter(
      (resource) => resource.Type === 'AWS::SecretsManager::Secret',
    );
    expect(secrets.map((secret) => secret.Properties?.Description)).not.toContainEqual(
      expect.stringContaining('Anthropic'),
    );
    const environment = workerEnvironment(built);
    expect(environment.ANTHROPIC_SECRET_ARN).toBeUndefined();
    expect(environment).toMatchObject({
      MODEL_PROVIDER: 'bedrock',
      BEDROCK_MODEL_ID: 'eu.anthropic.claude-sonnet-4-6-v1:0',
    });
    const workerSecretReads = built
      .statements(logicalIdOf(built.worker.role))
      .filter((statement) => actionsOf(statement).includes('secretsmanager:GetSecretValue'));
    expect(workerSecretReads).toEqual([]);
    const euModels = bedrockStatements(built.statements()).flatMap((statement) =>
      [statement.Resource].flat(),
    ).length;
    expect(euModels).toBe(1 + (GEOGRAPHY_REGIONS.eu?.length ?? 0));
  });

  it('refuses at synth a provider or a model id the worker could not use', () => {
    expect(() => modelAccessSettings({ modelProvider: 'openai' })).toThrow(
      'modelProvider must be one of anthropic, bedrock',
    );
    expect(() =>
      modelAccessSettings({ modelProvider: 'bedrock', bedrockModelId: 'claude-sonnet-4-6' }),
    ).toThrow('neither an Anthropic inference profile id');
    expect(() =>
      modelAccessSettings({ modelProvider: 'bedrock', bedrockModelId: 'mars.anthropic.claude-x-v1:0' }),
    ).toThrow('-c bedrockModelRegions=');
  });
});

describe('modelProvider=anthropic (the default)', () => {
  it('grants no Bedrock action and keeps the key secret for the worker', () => {
    const built = synthesize({});

    expect(bedrockStatements(built.statements())).toEqual([]);
    expect(built.stacks.stateful.stateful.anthropicApiKey).toBeDefined();
    const environment = workerEnvironment(built);
    expect(environment.ANTHROPIC_SECRET_ARN).toBeDefined();
    expect(environment.MODEL_PROVIDER).toBeUndefined();
  });
});
