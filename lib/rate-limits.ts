/**
 * The WAF web ACL on the API stage: per-caller rate rules (per Authorization header, per session
 * cookie, per client IP on /auth/*) on every route but the evaluations, which the API's usage plan
 * counts per team (lib/api.ts), and their 429 answer. local/gateway/rate-limit.ts emulates both.
 */
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { type AbuseLimits, routePattern } from '../lambdas/limits.ts';
import { GATEWAY_RESPONSE_HEADERS, RATE_LIMITED_BODY } from './gateway-errors.ts';

/** WAF counts requests over this window; a rate per second is that rate times the window. */
const WINDOW_SECONDS = 60;

export interface RateLimitsProps {
  /** The ARN of the API stage the web ACL protects. */
  readonly stageArn: string;
  /** The stage's name: WAF sees a request's path after it (`/<stage>/pipelines/…`). */
  readonly stageName: string;
  readonly limits: AbuseLimits;
  /** The path templates of the evaluation operations (declaration.ts evaluationPaths). */
  readonly evaluationPaths: readonly string[];
}

/**
 * A WAF web ACL on the API stage with per-caller rate rules: per API token or access token
 * (`Authorization` header), per session cookie, and per client IP for the credential-less /auth/*
 * routes. A caller over its rate gets 429 RATE_LIMITED with Retry-After, the others are not
 * slowed down (the stage-wide throttle stays far above one caller's share).
 */
export class RateLimits extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: RateLimitsProps) {
    super(scope, id);
    const { limits } = props;
    const perCredential = Math.max(10, limits.requestsPerSecondPerCredential * WINDOW_SECONDS);
    const block: CfnWebACL.RuleActionProperty = {
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: 'rateLimited',
          // WAF sets the content type from the body's; the others as on API Gateway's own answers.
          responseHeaders: [
            { name: 'retry-after', value: String(WINDOW_SECONDS) },
            ...Object.entries(GATEWAY_RESPONSE_HEADERS)
              .filter(([name]) => name.toLowerCase() !== 'content-type')
              .map(([name, value]) => ({ name, value })),
          ],
        },
      },
    };
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    const noTransform = [{ priority: 0, type: 'NONE' }];
    // `Bearer x`, `bearer  x` and `BEARER x` are one caller: one bucket, not one per spelling.
    const sameSpelling = [
      { priority: 0, type: 'LOWERCASE' },
      { priority: 1, type: 'COMPRESS_WHITE_SPACE' },
    ];
    // serving-configuration and OFREP: a pipeline may read its configuration on every request, so
    // the credential rules leave them to the evaluation plan's per-team throttle. Exactly their
    // routes (one segment a parameter): a path that merely ends like one is the credential's.
    const patterns = props.evaluationPaths.map((template) => ({
      regexMatchStatement: {
        fieldToMatch: { uriPath: {} },
        regexString: routePattern(template, `/${props.stageName}`),
        textTransformations: noTransform,
      },
    }));
    const evaluation: CfnWebACL.StatementProperty =
      patterns.length === 1
        ? (patterns[0] as CfnWebACL.StatementProperty)
        : { orStatement: { statements: patterns } };
    const management: CfnWebACL.StatementProperty = { notStatement: { statement: evaluation } };
    const rateRule = (
      name: string,
      priority: number,
      statement: CfnWebACL.RateBasedStatementProperty,
    ): CfnWebACL.RuleProperty => ({
      name,
      priority,
      action: block,
      statement: { rateBasedStatement: statement },
      visibilityConfig: visibility(name),
    });

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Per-caller rate limits of the Pipeline Synthesis API',
      customResponseBodies: {
        rateLimited: { contentType: 'APPLICATION_JSON', content: JSON.stringify(RATE_LIMITED_BODY) },
      },
      visibilityConfig: visibility('PipelineSynthesisApi'),
      rules: [
        // WAF only counts requests that carry every key of a rule: one rule per kind of credential.
        rateRule('PerAuthorizationHeader', 0, {
          aggregateKeyType: 'CUSTOM_KEYS',
          customKeys: [{ header: { name: 'authorization', textTransformations: sameSpelling } }],
          limit: perCredential,
          evaluationWindowSec: WINDOW_SECONDS,
          scopeDownStatement: management,
        }),
        rateRule('PerSessionCookie', 1, {
          aggregateKeyType: 'CUSTOM_KEYS',
          customKeys: [{ cookie: { name: 'ps_session', textTransformations: noTransform } }],
          limit: perCredential,
          evaluationWindowSec: WINDOW_SECONDS,
          scopeDownStatement: management,
        }),
        rateRule('AuthPerClientIp', 2, {
          aggregateKeyType: 'IP',
          limit: Math.max(10, limits.authRequestsPerMinutePerIp),
          evaluationWindowSec: WINDOW_SECONDS,
          scopeDownStatement: {
            byteMatchStatement: {
              fieldToMatch: { uriPath: {} },
              positionalConstraint: 'CONTAINS',
              searchString: '/auth/',
              textTransformations: noTransform,
            },
          },
        }),
      ],
    });
    new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
