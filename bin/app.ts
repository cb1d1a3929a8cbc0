import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { limitsFrom } from '../lambdas/limits.ts';
import { emailSettings } from '../lib/email.ts';
import { modelAccessSettings } from '../lib/model-access.ts';
import { createStacks } from '../lib/stacks.ts';
import { stageSettings } from '../lib/stage.ts';

// The stacks of one deployment: `PipelineSynthesisApi-<stage>` holds the data (tables, queues,
// secrets, event bus, alarm topic) and `PipelineSynthesisApi-<stage>-Service` the API and the
// functions; `npx cdk deploy --all` deploys both, the first first. `-c stage=prod` retains data and
// protects tables; the default dev stage destroys all.
const app = new App();
const stage = stageSettings(String(app.node.tryGetContext('stage') ?? 'dev'));
const defaultSynthesisHandler = String(app.node.tryGetContext('defaultSynthesisHandler') ?? 'heuristic-v1');
// Sign-in emails: -c emailFrom=noreply@acme.example (a verified SES identity; the default is a
// placeholder that SES refuses), -c emailIdentity=<address or domain> when the verified identity
// is not the address's domain, -c appUrl=https://... when magic links should open a browser app
// instead of this API's own page.
const optionalContext = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  return value === undefined ? undefined : String(value);
};
const email = emailSettings({
  from: optionalContext('emailFrom'),
  identity: optionalContext('emailIdentity'),
  appUrl: optionalContext('appUrl'),
});

// Rate limits and the synthesis quota: -c requestsPerSecondPerCredential=100 and the other fields
// of lambdas/limits.ts; the defaults never get in the way of honest use.
const limits = limitsFrom((_variable, field) => app.node.tryGetContext(field));

createStacks(app, `PipelineSynthesisApi-${stage.name}`, {
  stage,
  defaultSynthesisHandler,
  email,
  limits,
  // Alarms go to an SNS topic; -c alarmEmail=ops@acme.example subscribes an address to it.
  alarmEmail: optionalContext('alarmEmail'),
  // -c modelPrices='{"claude-sonnet-4":{"inputPerMillionUsd":3,"outputPerMillionUsd":15}}' overrides list prices.
  modelPrices: optionalContext('modelPrices'),
  // -c modelProvider=bedrock -c bedrockModelId=us.anthropic.claude-sonnet-4-6-v1:0 calls Claude through
  // Amazon Bedrock with the worker's role (no Anthropic key secret); the default is the Anthropic API.
  model: modelAccessSettings({
    modelProvider: optionalContext('modelProvider'),
    bedrockModelId: optionalContext('bedrockModelId'),
    bedrockModelRegions: optionalContext('bedrockModelRegions'),
  }),
  // -c recordShards=32 sets the data's shard count once, before any data (docs/scaling.md).
  recordShards: optionalContext('recordShards'),
  // -c eventBusConsumerAccounts=111111111111,222222222222 lets those accounts (only) route the bus's events.
  eventBusConsumerAccounts: (optionalContext('eventBusConsumerAccounts') ?? '')
    .split(',')
    .map((account) => account.trim())
    .filter((account) => account.length > 0),
  description: `Pipeline Synthesis API (${stage.name})`,
});

// cdk-nag findings fail `cdk synth` unless acknowledged (with a reason) where they arise in lib/.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
