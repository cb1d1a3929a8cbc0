import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_HTTP_BUNDLE_BYTES } from '../../bench/bundle-size.ts';
import { USAGE_KEY_BACKFILL } from '../../lambdas/functions.ts';
import { moduleOf } from '../../lambdas/operations/declaration.ts';
import { operationFunctions } from '../../lambdas/operations/functions.ts';
import { getSynthesisRun } from '../../lambdas/operations/get-synthesis-run.ts';
import { OPERATIONS } from '../../lambdas/operations/index.ts';
import { inviteTeamMember } from '../../lambdas/operations/invite-team-member.ts';
import { requestMagicLink } from '../../lambdas/operations/request-magic-link.ts';
import {
  buildScriptCommand,
  handlerEntryPath,
  LAMBDA_BUNDLING,
  onDemandParts,
  operationEntryPath,
} from '../../lib/bundling.ts';
import { emailSettings } from '../../lib/email.ts';
import { modelAccessSettings } from '../../lib/model-access.ts';
import { ServiceFunction } from '../../lib/service-function.ts';
import { stageSettings } from '../../lib/stage.ts';
import {
  buildStacks,
  type CfnResource,
  methodKey,
  methodPath,
  standInResources,
  testApp,
} from './helpers.ts';

interface Violation {
  ruleName: string;
  severity: string;
  violatingConstructs: { constructPath: string }[];
}

interface Acknowledged extends Violation {
  acknowledgedId: string;
  acknowledgedAt: string;
  reason: string;
}

interface PluginReport {
  pluginName: string;
  violations: Violation[];
  suppressedViolations?: Acknowledged[];
}

const ACKNOWLEDGEABLE_RULES = new Set([
  'AwsSolutions-APIG2',
  'AwsSolutions-APIG3',
  'AwsSolutions-APIG4',
  'AwsSolutions-COG4',
  'AwsSolutions-IAM4',
  'AwsSolutions-IAM5',
  'AwsSolutions-SMG4',
  'AwsSolutions-SQS3',
  // CDK's Provider framework's waiter state machine (the deploy's usage-key backfill).
  'AwsSolutions-SF1',
  'AwsSolutions-SF2',
]);

const outdirs: string[] = [];

function freshOutdir(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'infra-test-'));
  outdirs.push(outdir);
  return outdir;
}

/** Synthesizes with cdk-nag the way `cdk synth` does and returns its AwsSolutions report. */
function nagReport(app: App, outdir: string): PluginReport {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  try {
    app.synth();
  } catch {
    // A finding fails synthesis; the report says which.
  }
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: PluginReport[];
  };
  const awsSolutions = report.pluginReports.find((plugin) => plugin.pluginName === 'AwsSolutions');
  if (!awsSolutions) throw new Error('cdk-nag did not run');
  return awsSolutions;
}

function describeViolation(violation: Violation): string {
  return `${violation.severity} ${violation.ruleName} at ${violation.violatingConstructs.map((c) => c.constructPath).join(', ')}`;
}

afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

describe('cdk-nag AwsSolutions', () => {
  let report: PluginReport;
  let acknowledged: Acknowledged[];

  beforeAll(() => {
    const outdir = freshOutdir();
    const app = testApp(outdir);
    buildStacks(app, 'NagDev', { stage: 'dev' });
    buildStacks(app, 'NagProd', {
      stage: 'prod',
      email: emailSettings({ from: 'signin@acme.example', appUrl: 'https://app.acme.example' }),
    });
    // -c modelProvider=bedrock: the worker's role invokes the model, no Anthropic secret exists.
    buildStacks(app, 'NagBedrock', {
      stage: 'prod',
      model: modelAccessSettings({ modelProvider: 'bedrock' }),
    });
    report = nagReport(app, outdir);
    acknowledged = report.suppressedViolations ?? [];
  });

  it('leaves no finding unacknowledged, error or warning', () => {
    expect(report.violations.map(describeViolation)).toEqual([]);
  });

  it('acknowledges findings at the construct that triggers them, never at a stack', () => {
    expect(acknowledged.length).toBeGreaterThan(20);
    for (const finding of acknowledged) {
      expect(finding.acknowledgedAt.split('/').length, finding.acknowledgedId).toBeGreaterThanOrEqual(3);
      for (const construct of finding.violatingConstructs) {
        expect(construct.constructPath.startsWith(`${finding.acknowledgedAt}/`)).toBe(true);
      }
    }
  });

  it('acknowledges only the rules the design accepts, each with a real reason', () => {
    for (const finding of acknowledged) {
      expect(ACKNOWLEDGEABLE_RULES, finding.ruleName).toContain(finding.ruleName.replace(/\[.*\]$/, ''));
      expect(finding.reason.length, finding.acknowledgedId).toBeGreaterThanOrEqual(80);
    }
  });

  it('accepts only X-Ray and table-index wildcards, and the backfill framework invoking its functions', () => {
    const wildcards = acknowledged.filter((finding) => finding.ruleName.startsWith('AwsSolutions-IAM5'));

    expect(wildcards.length).toBeGreaterThan(0);
    for (const finding of wildcards) {
      // The Provider framework invoking a function's versions, in the deploy's usage-key backfill only.
      if (finding.acknowledgedAt.includes('/ProvisionUsageKeysOnDeploy/')) {
        expect(finding.ruleName).toMatch(/^AwsSolutions-IAM5\[Resource::<\w+\.Arn>:\*\]$/);
        continue;
      }
      // A table's indexes, as the grant names them across stacks: an import of the table's ARN.
      expect(finding.ruleName).toMatch(
        /^AwsSolutions-IAM5\[Resource::(\*|[\w-]+:ExportsOutputFnGetAttStateful\w+Table\w+Arn\w+\/index\/\*)\]$/,
      );
    }
  });

  it('accepts a method without authorization exactly for the public operations, at each method', () => {
    const publicOperations = OPERATIONS.filter((operation) => operation.public !== undefined);
    const unauthorized = acknowledged.filter((finding) => finding.ruleName === 'AwsSolutions-APIG4');

    expect(publicOperations.length).toBeGreaterThan(0);
    expect(unauthorized.map((finding) => finding.acknowledgedAt).sort()).toEqual(
      ['NagDev', 'NagProd', 'NagBedrock']
        .flatMap((stack) => publicOperations.map((operation) => methodPath(stack, operation)))
        .sort(),
    );
    for (const finding of unauthorized) {
      expect(finding.reason, finding.acknowledgedAt).toMatch(/^(GET|POST|DELETE) \/\S+: Public by design: /);
    }
  });

  it("acknowledges each public operation's method with the reason its declaration gives", () => {
    for (const operation of OPERATIONS.filter((candidate) => candidate.public !== undefined)) {
      const at = (rule: string) =>
        acknowledged.find(
          (finding) =>
            finding.ruleName === rule && finding.acknowledgedAt === methodPath('NagDev', operation),
        )?.reason;

      expect(operation.public?.length, operation.name).toBeGreaterThanOrEqual(40);
      expect(at('AwsSolutions-APIG4'), operation.name).toBe(
        `${methodKey(operation)}: Public by design: ${operation.public}`,
      );
      expect(at('AwsSolutions-COG4'), operation.name).toMatch(/takes no credential/);
      expect(at('AwsSolutions-COG4')?.endsWith(`Public by design: ${operation.public}`), operation.name).toBe(
        true,
      );
    }
  });

  it('gives every public operation its own Cognito acknowledgement instead of the authorizer one', () => {
    const cognito = acknowledged.filter((finding) => finding.ruleName === 'AwsSolutions-COG4');

    for (const operation of OPERATIONS) {
      const finding = cognito.find(
        (candidate) => candidate.acknowledgedAt === methodPath('NagDev', operation),
      );

      expect(finding?.reason, methodKey(operation)).toMatch(
        operation.public === undefined ? /REQUEST authorizer/ : /takes no credential/,
      );
    }
  });

  it('fails synthesis on a finding nobody acknowledged', () => {
    const outdir = freshOutdir();
    const app = new App({ outdir });
    new Queue(new Stack(app, 'Unsafe'), 'PlainQueue', { enforceSSL: false });

    const unsafe = nagReport(app, outdir);

    expect(unsafe.violations.map((violation) => violation.ruleName)).toContain('AwsSolutions-SQS4');
  });
});

describe('bundling', () => {
  it('bundles an operation module into an ES module that imports in plain node with the environment the stack gives it', () => {
    const operation = getSynthesisRun;
    const outdir = freshOutdir();
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundle');
    new ServiceFunction(stack, 'Fn', {
      entryFile: operationEntryPath(moduleOf(operation)),
      access: operation.access,
      resources: standInResources(stack),
      settings: { tracing: false, removalPolicy: stageSettings('dev').removalPolicy, logLevel: 'INFO' },
      description: 'bundling check',
    });

    const template = app.synth().getStackByName('Bundle').template as {
      Resources: Record<string, CfnResource>;
    };
    const fn = Object.values(template.Resources).find(
      (resource) => resource.Type === 'AWS::Lambda::Function',
    );
    const declared = fn?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined;
    const variables = declared?.Variables ?? {};
    // Table names and ARNs are tokens until deploy; any non-empty value does for an import.
    const environment = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [
        name,
        typeof value === 'string' ? value : `test-${name}`,
      ]),
    );
    const assetDirs = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
    const bundle = join(outdir, assetDirs[0] ?? 'missing', 'index.mjs');

    expect(Object.keys(variables)).toContain('RUNS_TABLE');
    expect(assetDirs).toHaveLength(1);
    expect(existsSync(bundle)).toBe(true);
    const code = readFileSync(bundle, 'utf8');
    expect(code.startsWith(LAMBDA_BUNDLING.banner)).toBe(true);
    // Only the environment credential provider is bundled: none of the SSO, profile, process,
    // web-identity or container providers that a Lambda never uses.
    for (const unused of [
      'sso_start_url',
      'credential_process',
      'AssumeRoleWithWebIdentity',
      'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    ]) {
      expect(code.includes(unused), `the bundle contains ${unused}`).toBe(false);
    }
    const exported = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); console.log(typeof m.handler);`,
      ],
      {
        env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', NODE_NO_WARNINGS: '1', ...environment },
        encoding: 'utf8',
      },
    );
    expect(exported.trim()).toBe('function');
  }, 60_000);
  it.each([
    ['request-magic-link', requestMagicLink],
    ['invite-team-member', inviteTeamMember],
  ] as const)(
    'bundles %s with the SES client in ses-client.mjs, which index.mjs loads only for an email',
    (_name, operation) => {
      const outdir = freshOutdir();
      const app = new App({ outdir });
      const stack = new Stack(app, 'MagicLinkBundle');
      const module = moduleOf(operation);
      new ServiceFunction(stack, 'Fn', {
        entryFile: operationEntryPath(module),
        access: operation.access,
        resources: {
          ...standInResources(stack),
          email: { from: 'noreply@example.com', identity: 'example.com', appUrl: 'https://app.example.com' },
        },
        settings: { tracing: false, removalPolicy: stageSettings('dev').removalPolicy, logLevel: 'INFO' },
        description: 'bundling check',
        onDemandParts: onDemandParts(module),
      });

      app.synth();
      const assetDirs = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
      const asset = join(outdir, assetDirs[0] ?? 'missing');
      const files = readdirSync(asset);
      const everyInvocation = files.filter((file) => file !== 'ses-client.mjs');

      expect(assetDirs).toHaveLength(1);
      expect(files).toContain('index.mjs');
      expect(files).toContain('ses-client.mjs');
      // The SES client's code (its service name, its error shapes) is in its part only, so a cold
      // start does not parse it.
      for (const marker of ['SimpleEmailService', 'SuppressedDestination']) {
        expect(readFileSync(join(asset, 'ses-client.mjs'), 'utf8')).toContain(marker);
        for (const file of everyInvocation)
          expect(readFileSync(join(asset, file), 'utf8').includes(marker), file).toBe(false);
      }
      rmSync(join(asset, 'ses-client.mjs'));
      const exported = execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(pathToFileURL(join(asset, 'index.mjs')).href)}); console.log(typeof m.handler);`,
        ],
        {
          env: {
            PATH: process.env.PATH ?? '',
            AWS_REGION: 'us-east-1',
            NODE_NO_WARNINGS: '1',
            AUTH_TABLE: 'auth',
            AWS_LAMBDA_FUNCTION_NAME: 'bundling-check',
          },
          encoding: 'utf8',
        },
      );
      expect(exported.trim()).toBe('function');
    },
    60_000,
  );

  it('bundles the usage-key backfill within the size of an HTTP function, and it imports in plain node with its environment', () => {
    const outdir = freshOutdir();
    const app = new App({ outdir });
    const stack = new Stack(app, 'BackfillBundle');
    new ServiceFunction(stack, 'Fn', {
      entryFile: handlerEntryPath(USAGE_KEY_BACKFILL.entry),
      access: USAGE_KEY_BACKFILL.access,
      trigger: USAGE_KEY_BACKFILL.trigger,
      resources: { ...standInResources(stack), evaluationPlanId: 'plan12' },
      settings: { tracing: false, removalPolicy: stageSettings('dev').removalPolicy, logLevel: 'INFO' },
      description: 'bundling check',
    });

    app.synth();
    const assetDirs = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
    const bundle = join(outdir, assetDirs[0] ?? 'missing', 'index.mjs');

    expect(assetDirs).toHaveLength(1);
    expect(statSync(bundle).size).toBeLessThanOrEqual(MAX_HTTP_BUNDLE_BYTES);
    expect(readFileSync(bundle, 'utf8').startsWith(LAMBDA_BUNDLING.banner)).toBe(true);
    const exported = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); console.log(typeof m.handler);`,
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          AWS_REGION: 'us-east-1',
          NODE_NO_WARNINGS: '1',
          POWERTOOLS_LOG_LEVEL: 'SILENT',
          AUTH_TABLE: 'auth',
          USAGE_PLAN_ID: 'plan12',
        },
        encoding: 'utf8',
      },
    );
    expect(exported.trim()).toBe('function');
  }, 60_000);

  it('builds the review application into the assets function at synth time: the shell, its script and its CSP', () => {
    const serveApp = operationFunctions(OPERATIONS).find((candidate) => candidate.module === 'serve-app');
    if (!serveApp) throw new Error('no serve-app function');
    expect(serveApp.buildsFirst).toEqual(['web/build.ts']);
    const outdir = freshOutdir();
    const app = new App({ outdir });
    const stack = new Stack(app, 'AppBundle');
    new ServiceFunction(stack, 'ServeApp', {
      entryFile: operationEntryPath(serveApp.module),
      access: serveApp.access,
      resources: standInResources(stack),
      settings: { tracing: false, removalPolicy: stageSettings('dev').removalPolicy, logLevel: 'INFO' },
      description: serveApp.operations.map(methodKey).join(', '),
      // What lib/api.ts makes of the declared `buildsFirst`.
      beforeBundling: serveApp.buildsFirst.map(buildScriptCommand),
    });

    app.synth();
    const assetDirs = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
    const bundle = join(outdir, assetDirs[0] ?? 'missing', 'index.mjs');
    // The deployed handler, in plain node, as API Gateway calls it on a stage: the shell, then its script.
    const script = `
      const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
      const call = (path, proxy) => handler({
        httpMethod: 'GET', path, headers: {}, multiValueHeaders: {}, queryStringParameters: null,
        multiValueQueryStringParameters: null, pathParameters: proxy ? { proxy } : null, body: null,
        requestContext: { path: '/dev' + path, stage: 'dev', domainName: 'abc123.execute-api.us-east-1.amazonaws.com' },
      }, { awsRequestId: 'test', functionName: 'serve-app' });
      const shell = await call('/app/');
      const src = /<script type="module" src="([^"]+)"/.exec(shell.body)[1];
      const asset = await call('/app/' + src, src);
      console.log(JSON.stringify({ shell, src, asset }));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        NODE_NO_WARNINGS: '1',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
      },
      encoding: 'utf8',
    });
    const { shell, src, asset } = JSON.parse(output) as {
      shell: { statusCode: number; headers: Record<string, string>; body: string };
      src: string;
      asset: { statusCode: number; headers: Record<string, string>; body: string };
    };

    expect(assetDirs).toHaveLength(1);
    expect(shell.statusCode).toBe(200);
    expect(shell.body).toContain('<base href="/dev/app/">');
    expect(shell.headers['content-security-policy']).toContain("script-src 'self'");
    expect(src).toMatch(/^assets\/main-\w+\.js$/);
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    // The integrity the shell pins is the script the function serves.
    const integrity = `sha384-${createHash('sha384').update(asset.body).digest('base64')}`;
    expect(shell.body).toContain(`integrity="${integrity}"`);
  }, 90_000);
});
