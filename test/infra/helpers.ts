import { App, CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { OperationDeclaration } from '../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../lambdas/operations/index.ts';
import type { EmailSettings } from '../../lib/email.ts';
import { PipelineSynthesisStack } from '../../lib/pipeline-synthesis-stack.ts';
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
}

export function buildStack(app: App, id: string, options: BuildOptions): PipelineSynthesisStack {
  return new PipelineSynthesisStack(app, id, {
    stage: stageSettings(options.stage),
    defaultSynthesisHandler: options.defaultSynthesisHandler ?? 'heuristic-v1',
    operations: options.operations ?? OPERATIONS,
    ...(options.email ? { email: options.email } : {}),
    ...(options.alarmEmail ? { alarmEmail: options.alarmEmail } : {}),
    ...(options.eventBusConsumerAccounts
      ? { eventBusConsumerAccounts: options.eventBusConsumerAccounts }
      : {}),
  });
}

/** An app that skips bundling: synthesizing never runs esbuild. */
export function testApp(outdir?: string): App {
  return new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
}

/** The construct path API Gateway gives an operation's method: `<stack>/Api/RestApi/Default/<path>/<METHOD>`. */
export function methodPath(
  stackId: string,
  operation: Pick<OperationDeclaration, 'method' | 'path'>,
): string {
  return `${stackId}/Api/RestApi/Default${operation.path}/${operation.method}`;
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

/** The logical ids a CloudFormation value refers to through Ref or Fn::GetAtt. */
export function referencedLogicalIds(value: unknown): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      if (key === 'Ref' && typeof child === 'string') found.add(child);
      else if (key === 'Fn::GetAtt' && Array.isArray(child) && typeof child[0] === 'string')
        found.add(child[0]);
      else visit(child);
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
