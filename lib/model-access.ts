/**
 * Which provider the worker's claude-v1 calls (`-c modelProvider=anthropic|bedrock`) and, for
 * Bedrock, exactly what IAM must allow: `bedrock:InvokeModel` on the inference profile and on the
 * foundation models it routes to (or on the one model, for a plain model id), nothing broader.
 */
import { Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IConstruct } from 'constructs';
import { DEFAULT_BEDROCK_MODEL_ID, MODEL_PROVIDERS, type ModelProvider } from '../lambdas/wiring/bedrock.ts';

export interface ModelAccessSettings {
  readonly provider: ModelProvider;
  /** Bedrock only: an inference profile id (us.anthropic.…) or a model id (anthropic.…). */
  readonly bedrockModelId: string;
  /**
   * Bedrock only: the regions a geographic inference profile routes to, when the table below is
   * out of date for it (`-c bedrockModelRegions=us-east-1,us-west-2`). @default GEOGRAPHY_REGIONS
   */
  readonly bedrockModelRegions?: readonly string[];
}

/**
 * The destination regions of Anthropic's geographic inference profiles (the Bedrock console's
 * "Cross-region inference" page, 2026-12). `global.` profiles route anywhere: see globalResources.
 */
export const GEOGRAPHY_REGIONS: Readonly<Record<string, readonly string[]>> = {
  us: ['us-east-1', 'us-east-2', 'us-west-2'],
  'us-gov': ['us-gov-east-1', 'us-gov-west-1'],
  eu: ['eu-central-1', 'eu-north-1', 'eu-south-1', 'eu-south-2', 'eu-west-1', 'eu-west-3'],
  apac: [
    'ap-northeast-1',
    'ap-northeast-2',
    'ap-northeast-3',
    'ap-south-1',
    'ap-south-2',
    'ap-southeast-1',
    'ap-southeast-2',
    'ap-southeast-4',
  ],
  jp: ['ap-northeast-1', 'ap-northeast-3'],
  au: ['ap-southeast-2', 'ap-southeast-4'],
  ca: ['ca-central-1', 'ca-west-1'],
};

const MODEL_ID = /^(?:([a-z-]+)\.)?(anthropic\.[A-Za-z0-9.:-]+)$/;

/** The settings from CDK context values; a value the worker could not use fails `cdk synth`. */
export function modelAccessSettings(context: {
  modelProvider?: string | undefined;
  bedrockModelId?: string | undefined;
  bedrockModelRegions?: string | undefined;
}): ModelAccessSettings {
  const provider = (context.modelProvider ?? 'anthropic').trim();
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider))
    throw new Error(`modelProvider must be one of ${MODEL_PROVIDERS.join(', ')}, not "${provider}".`);
  const bedrockModelId = (context.bedrockModelId ?? DEFAULT_BEDROCK_MODEL_ID).trim();
  const parsed = MODEL_ID.exec(bedrockModelId);
  if (provider === 'bedrock' && parsed === null)
    throw new Error(
      `bedrockModelId "${bedrockModelId}" is neither an Anthropic inference profile id (us.anthropic.claude-…) nor a model id (anthropic.claude-…).`,
    );
  if (
    provider === 'bedrock' &&
    parsed?.[1] !== undefined &&
    parsed[1] !== 'global' &&
    !GEOGRAPHY_REGIONS[parsed[1]] &&
    !context.bedrockModelRegions
  )
    throw new Error(
      `bedrockModelId "${bedrockModelId}": the regions of the "${parsed[1]}" inference profiles are not known here; give them with -c bedrockModelRegions=<region>,<region>.`,
    );
  const regions = context.bedrockModelRegions
    ?.split(',')
    .map((region) => region.trim())
    .filter((region) => region !== '');
  return {
    provider: provider as ModelProvider,
    bedrockModelId,
    ...(regions?.length ? { bedrockModelRegions: regions } : {}),
  };
}

/** The one statement the worker's role gets on Bedrock: InvokeModel on the profile and the models it routes to. */
export function bedrockInvokeStatement(scope: IConstruct, settings: ModelAccessSettings): PolicyStatement {
  return new PolicyStatement({
    actions: ['bedrock:InvokeModel'],
    resources: bedrockResourceArns(scope, settings),
  });
}

/** The ARNs InvokeModel of `bedrockModelId` needs in `scope`'s stack (its region and account). */
export function bedrockResourceArns(scope: IConstruct, settings: ModelAccessSettings): string[] {
  const stack = Stack.of(scope);
  const [, geography, model = ''] = MODEL_ID.exec(settings.bedrockModelId) ?? [];
  const foundationModel = (region: string) =>
    Arn.format(
      {
        service: 'bedrock',
        region,
        account: '',
        resource: 'foundation-model',
        resourceName: model,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      },
      stack,
    );
  // A plain model id is invoked in the stack's region alone.
  if (geography === undefined) return [foundationModel(stack.region)];
  const profile = Arn.format(
    {
      service: 'bedrock',
      resource: 'inference-profile',
      resourceName: settings.bedrockModelId,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    },
    stack,
  );
  // A global profile names its models without a region (arn:aws:bedrock:::foundation-model/…).
  if (geography === 'global') return [profile, foundationModel(stack.region), foundationModel('')];
  const regions = settings.bedrockModelRegions ?? GEOGRAPHY_REGIONS[geography] ?? [];
  return [profile, ...regions.map(foundationModel)];
}

/** What the functions that call the model get: the Anthropic key's secret, or the Bedrock model to invoke. */
export type ModelResource =
  | { readonly provider: 'anthropic'; readonly apiKey: ISecret }
  | { readonly provider: 'bedrock'; readonly settings: ModelAccessSettings };

/** The model resource for `settings`; the anthropic provider needs the stateful stack's key secret. */
export function modelResource(settings: ModelAccessSettings, apiKey: ISecret | undefined): ModelResource {
  if (settings.provider === 'bedrock') return { provider: 'bedrock', settings };
  if (apiKey === undefined) throw new Error('modelProvider anthropic needs the Anthropic API key secret.');
  return { provider: 'anthropic', apiKey };
}

/** The environment that leads claude-v1 (and the start function's estimate) to its model. */
export function modelEnvironment(model: ModelResource): Record<string, string> {
  return model.provider === 'bedrock'
    ? { MODEL_PROVIDER: 'bedrock', BEDROCK_MODEL_ID: model.settings.bedrockModelId }
    : { ANTHROPIC_SECRET_ARN: model.apiKey.secretArn };
}
