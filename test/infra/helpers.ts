/** What the infra tests share: building the app's stacks, reading their templates, following references. */
import { App, CfnElement, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import type { OperationDeclaration } from '../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../lambdas/operations/index.ts';
import { QUEUES } from '../../lambdas/queues.ts';
import { TABLE_DEFINITIONS } from '../../lambdas/store/table-definitions.ts';
import type { EmailSettings } from '../../lib/email.ts';
import type { ModelAccessSettings } from '../../lib/model-access.ts';
import type { GrantableResources } from '../../lib/service-function.ts';
import { createStacks, type PipelineSynthesisStacks } from '../../lib/stacks.ts';
import { type StageName, stageSettings } from '../../lib/stage.ts';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface PolicyStatement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export interface BuildOptions {
  stage: StageName;
  defaultSynthesisHandler?: string;
  operations?: readonly OperationDeclaration[];
  email?: EmailSettings;
  alarmEmail?: string;
  eventBusConsumerAccounts?: string[];
  /** claude-v1's provider (`-c modelProvider=…`). @default the Anthropic API */
  model?: ModelAccessSettings;
}

/** The app's stacks: `<id>` (stateful) and `<id>-Service`. */
export function buildStacks(app: App, id: string, options: BuildOptions): PipelineSynthesisStacks {
  return createStacks(app, id, {
    stage: stageSettings(options.stage),
    defaultSynthesisHandler: options.defaultSynthesisHandler ?? 'heuristic-v1',
    operations: options.operations ?? OPERATIONS,
    ...(options.email ? { email: options.email } : {}),
    ...(options.alarmEmail ? { alarmEmail: options.alarmEmail } : {}),
    ...(options.eventBusConsumerAccounts
      ? { eventBusConsumerAccounts: options.eventBusConsumerAccounts }
      : {}),
    ...(options.model ? { model: options.model } : {}),
  });
}

/** An app that skips bundling: synthesizing never runs esbuild. */
export function testApp(outdir?: string): App {
  return new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
}

/** The construct path API Gateway gives an operation's method: `<id>-Service/Api/RestApi/Default/<path>/<METHOD>`. */
export function methodPath(
  stackId: string,
  operation: Pick<OperationDeclaration, 'method' | 'path'>,
): string {
  return `${stackId}-Service/Api/RestApi/Default${operation.path}/${operation.method}`;
}

/** Every stack of the app's stacks, nested ones included, with its synthesized template. */
export function templatesOf(stacks: PipelineSynthesisStacks): Array<{ stack: Stack; template: Template }> {
  const nested = stacks.service.node
    .findAll()
    .filter((construct): construct is NestedStack => construct instanceof NestedStack);
  return [stacks.stateful, stacks.service, ...nested].map((stack) => ({
    stack,
    template: Template.fromStack(stack),
  }));
}

/** `POST /auth/login`: how an operation's method is named in descriptions and test titles. */
export function methodKey(operation: Pick<OperationDeclaration, 'method' | 'path'>): string {
  return `${operation.method} ${operation.path}`;
}

export function logicalIdOf(construct: IConstruct): string {
  const element = construct instanceof CfnElement ? construct : construct.node.defaultChild;
  if (!(element instanceof CfnElement))
    throw new Error(`${construct.node.path} has no CloudFormation resource.`);
  return Stack.of(element).getLogicalId(element);
}

export function actionsOf(statement: PolicyStatement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

export function resourcesOf(statement: PolicyStatement): unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** Every statement of every IAM policy attached to the role. */
export function statementsOfRole(
  resources: Record<string, CfnResource>,
  roleLogicalId: string,
): PolicyStatement[] {
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::IAM::Policy')
    .filter((policy) => JSON.stringify(policy.Properties?.Roles).includes(`{"Ref":"${roleLogicalId}"}`))
    .flatMap(policyStatements);
}

/** The statements of an IAM or queue policy resource. */
export function policyStatements(policy: CfnResource | undefined): PolicyStatement[] {
  const document = policy?.Properties?.PolicyDocument as { Statement?: PolicyStatement[] } | undefined;
  return document?.Statement ?? [];
}

/**
 * What following a reference across templates needs: every logical id of the app (unique across its
 * templates), and what each nested stack's parameters are given by the parent.
 */
export interface ReferenceIndex {
  known: ReadonlySet<string>;
  parameters: ReadonlyMap<string, unknown>;
  /** The outputs of the nested stacks, by name: what the parent reads with Fn::GetAtt `Outputs.<name>`. */
  outputs: ReadonlyMap<string, unknown>;
}

/** The index of an app's templates (logical ids and output names are unique across them). */
export function referenceIndex(
  templates: ReadonlyArray<{
    Resources: Record<string, CfnResource>;
    Outputs?: Record<string, { Value: unknown }>;
  }>,
): ReferenceIndex {
  const parameters = new Map<string, unknown>();
  const outputs = new Map<string, unknown>();
  const known = new Set<string>();
  for (const template of templates) {
    for (const [id, resource] of Object.entries(template.Resources)) {
      known.add(id);
      if (resource.Type !== 'AWS::CloudFormation::Stack') continue;
      const given = (resource.Properties?.Parameters ?? {}) as Record<string, unknown>;
      for (const [name, value] of Object.entries(given)) parameters.set(name, value);
    }
    for (const [name, output] of Object.entries(template.Outputs ?? {})) outputs.set(name, output.Value);
  }
  return { known, parameters, outputs };
}

/**
 * The logical ids a CloudFormation value refers to: through Ref or Fn::GetAtt in its own template,
 * and across templates through an import of another stack's export (whose name CDK makes from the
 * logical id it stands for), a nested stack's output (what it is) or parameter (what the parent
 * gives it).
 */
export function referencedLogicalIds(value: unknown, index?: ReferenceIndex): Set<string> {
  const found = new Set<string>();
  const across = (name: string) => {
    for (const id of index?.known ?? []) if (name.includes(id)) found.add(id);
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      if (key === 'Ref' && typeof child === 'string') {
        const given = index?.parameters.get(child);
        if (given !== undefined) visit(given);
        else found.add(child);
      } else if (key === 'Fn::GetAtt' && Array.isArray(child) && typeof child[0] === 'string') {
        const output =
          typeof child[1] === 'string' && child[1].startsWith('Outputs.') ? child[1].slice(8) : '';
        if (index?.outputs.has(output)) visit(index.outputs.get(output));
        else found.add(child[0]);
      } else if (key === 'Fn::ImportValue' && typeof child === 'string') {
        across(child);
      } else visit(child);
    }
  };
  visit(value);
  return found;
}

/** The full path ("/pipelines/{pipelineId}") of every API Gateway resource, by logical id. */
export function resourcePaths(resources: Record<string, CfnResource>): Map<string, string> {
  const paths = new Map<string, string>();
  const pathOf = (logicalId: string): string => {
    const known = paths.get(logicalId);
    if (known !== undefined) return known;
    const resource = resources[logicalId];
    if (resource?.Type !== 'AWS::ApiGateway::Resource') throw new Error(`No resource ${logicalId}`);
    const parent = resource.Properties?.ParentId as { Ref?: string };
    const parentPath = parent.Ref ? pathOf(parent.Ref) : '';
    const path = `${parentPath}/${String(resource.Properties?.PathPart)}`;
    paths.set(logicalId, path);
    return path;
  };
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::ApiGateway::Resource') pathOf(logicalId);
  }
  return paths;
}

/**
 * Stand-ins for everything a function may be granted, in one plain stack: for the bundling tests,
 * which build one function alone.
 */
export function standInResources(stack: Stack): GrantableResources {
  const tables = new Map(
    TABLE_DEFINITIONS.map((definition) => [
      definition.id,
      new Table(stack, definition.id, {
        partitionKey: { name: definition.partitionKey, type: AttributeType.STRING },
      }),
    ]),
  );
  const queues = new Map(
    QUEUES.map((definition) => [
      definition.name,
      {
        queue: new Queue(stack, `${definition.name}-queue`),
        deadLetterQueue: new Queue(stack, `${definition.name}-dlq`),
      },
    ]),
  );
  return {
    tables,
    queues,
    sessionSigningKey: new Secret(stack, 'SigningKey'),
    model: { provider: 'anthropic', apiKey: new Secret(stack, 'AnthropicKey') },
    webhookSecretKey: new Secret(stack, 'WebhookKey'),
    eventBus: new EventBus(stack, 'Bus'),
  };
}
