import { ArnFormat, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * The sender of sign-in emails. A placeholder until the operator passes a verified SES identity
 * (`cdk deploy -c emailFrom=noreply@acme.example`): SES refuses to send from an identity the
 * account has not verified, so with the placeholder a magic-link request fails loudly instead of
 * mailing from somebody else's domain.
 */
export const PLACEHOLDER_EMAIL_FROM = 'noreply@example.com';

/** How the functions that send email (`sendsEmail` in an operation's access) are set up. */
export interface EmailSettings {
  /** EMAIL_FROM: the From address of every email. */
  readonly from: string;
  /**
   * The verified SES identity the address belongs to: the address itself, or its domain (or a
   * parent domain). The only resource ses:SendEmail is granted on.
   */
  readonly identity: string;
  /**
   * APP_URL: where magic links point. Absent: the API's own stage URL, whose magic-link page
   * (operations/show-magic-link-page.ts) completes the sign-in.
   */
  readonly appUrl?: string;
}

export interface EmailSettingsInput {
  /** Context `emailFrom`. @default PLACEHOLDER_EMAIL_FROM */
  readonly from?: string;
  /** Context `emailIdentity`. @default the domain of `from` */
  readonly identity?: string;
  /** Context `appUrl`. @default the API's stage URL */
  readonly appUrl?: string;
}

const EMAIL_ADDRESS = /^[^\s@<>]+@([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$/;

/** Checks the settings at synth time, so a typo fails `cdk synth`, not the first sign-in email. */
export function emailSettings(input: EmailSettingsInput = {}): EmailSettings {
  const from = input.from ?? PLACEHOLDER_EMAIL_FROM;
  const domain = EMAIL_ADDRESS.exec(from)?.[1]?.toLowerCase();
  if (!domain) throw new Error(`emailFrom '${from}' is not a plain email address (name@domain).`);
  const identity = (input.identity ?? domain).toLowerCase();
  const covers = identity === from.toLowerCase() || identity === domain || domain.endsWith(`.${identity}`);
  if (!covers) {
    throw new Error(
      `emailIdentity '${identity}' does not cover emailFrom '${from}': use the address itself or its domain.`,
    );
  }
  if (input.appUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(input.appUrl)) {
    throw new Error(`appUrl '${input.appUrl}' is not an http(s) URL.`);
  }
  return { from, identity, ...(input.appUrl !== undefined ? { appUrl: input.appUrl } : {}) };
}

/** `arn:<partition>:ses:<region>:<account>:identity/<identity>` of the scope's stack. */
export function sesIdentityArn(scope: IConstruct, identity: string): string {
  return Stack.of(scope).formatArn({
    service: 'ses',
    resource: 'identity',
    resourceName: identity,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
}
