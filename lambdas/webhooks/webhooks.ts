/*
 * Use cases of a team's webhooks: create one (secret shown once, URL checked against SSRF, at most
 * 20 a team), list them without secrets, delete one, read its deliveries.
 */
import * as z from 'zod/mini';
import { NotFoundError } from '../core/errors.ts';
import { actorOf, EVENT_TYPES, eventTypeSchema, newEvent } from '../core/events.ts';
import type { Clock, IdGenerator, PageRequest } from '../core/ports/common.ts';
import { assertCanWrite, type Principal } from '../core/principal.ts';
import type { Page } from '../core/schemas/common.ts';
import {
  type Delivery,
  type SecretKeyProvider,
  WEBHOOK_FORMATS,
  type WebhookFormat,
  type WebhookRecord,
  type WebhookRepository,
} from './ports.ts';
import { generateWebhookSecret, sealSecret } from './secret.ts';
import { receivesAllTypes } from './subscription.ts';
import type { CheckedTarget } from './url-guard.ts';

/** At most this many webhooks a team: every event fans out to each, so the number bounds a delivery burst. */
export const MAX_WEBHOOKS_PER_TEAM = 20;

export const createWebhookBodySchema = z.object({
  // An absolute https URL (the URL guard checks it, and where it resolves, at creation and each attempt).
  url: z
    .string()
    .check(z.minLength(1), z.maxLength(2048))
    .register(z.globalRegistry, { format: 'uri', pattern: '^https://' } as never),
  /** The event types to receive; every type when absent. */
  eventTypes: z.optional(z.array(eventTypeSchema).check(z.minLength(1), z.maxLength(EVENT_TYPES.length))),
  description: z.optional(z.string().check(z.maxLength(500))),
  /** standard (the default): the signed envelope; slack: a Slack incoming-webhook message, not signed. */
  format: z.optional(z.enum(WEBHOOK_FORMATS)),
});
export type CreateWebhookBody = z.infer<typeof createWebhookBodySchema>;

/** A webhook as the API shows it: never the secret. */
export interface WebhookView {
  id: string;
  url: string;
  /** The types it receives now: every type when `allEventTypes`. */
  eventTypes: string[];
  allEventTypes: boolean;
  description: string | null;
  createdAt: string;
  disabledAt: string | null;
  format: WebhookFormat;
}

export function toWebhookView(webhook: WebhookRecord): WebhookView {
  const allEventTypes = receivesAllTypes(webhook);
  return {
    id: webhook.id,
    url: webhook.url,
    eventTypes: allEventTypes ? [...EVENT_TYPES] : webhook.eventTypes,
    allEventTypes,
    description: webhook.description,
    createdAt: webhook.createdAt,
    disabledAt: webhook.disabledAt,
    format: webhook.format ?? 'standard',
  };
}

export interface WebhookDeps {
  webhooks: WebhookRepository;
  secretKey: SecretKeyProvider;
  /** The SSRF check (url-guard.ts with the stack's policy); a ValidationError when refused. */
  checkUrl: (url: string) => Promise<CheckedTarget>;
  clock: Clock;
  ids: IdGenerator;
}

/** Creates a webhook of the caller's team and returns its secret, this once. */
export function makeCreateWebhook({ webhooks, secretKey, checkUrl, clock, ids }: WebhookDeps) {
  return async (principal: Principal, body: CreateWebhookBody): Promise<WebhookView & { secret: string }> => {
    assertCanWrite(principal);
    await checkUrl(body.url);
    const secret = generateWebhookSecret();
    const createdAt = clock.now().toISOString();
    const webhook: WebhookRecord = {
      id: ids.newId(),
      teamId: principal.teamId,
      url: body.url,
      eventTypes: [...new Set(body.eventTypes ?? EVENT_TYPES)],
      allEventTypes: body.eventTypes === undefined,
      description: body.description ?? null,
      createdAt,
      createdBy: principal.userId,
      disabledAt: null,
      sealedSecret: sealSecret(secret, await secretKey()),
      format: body.format ?? 'standard',
    };
    const event = newEvent(
      'webhook.created',
      { teamId: webhook.teamId, webhookId: webhook.id, actor: actorOf(principal) },
      { at: createdAt, key: webhook.id },
    );
    await webhooks.create(webhook, event, MAX_WEBHOOKS_PER_TEAM);
    return { ...toWebhookView(webhook), secret };
  };
}

/**
 * A webhook's URL as a member or viewer sees it: its query string, fragment and user info (where
 * receivers' tokens often sit) redacted; admins, who create and delete webhooks, see it whole.
 */
export function urlShownTo(principal: Principal, url: string): string {
  if (principal.role === 'admin') return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '[redacted]';
  }
  if (parsed.username || parsed.password) {
    parsed.username = 'redacted';
    parsed.password = '';
  }
  if (parsed.search) parsed.search = '?redacted';
  parsed.hash = '';
  return parsed.toString();
}

/** The team's webhooks, without secrets; URLs whole to admins only (urlShownTo). */
export function makeListWebhooks({ webhooks }: Pick<WebhookDeps, 'webhooks'>) {
  return async (principal: Principal): Promise<Page<WebhookView>> => ({
    items: (await webhooks.list(principal.teamId)).map((webhook) => ({
      ...toWebhookView(webhook),
      url: urlShownTo(principal, webhook.url),
    })),
    nextCursor: null,
  });
}

async function ownWebhook(webhooks: WebhookRepository, principal: Principal, webhookId: string) {
  const webhook = await webhooks.get(principal.teamId, webhookId);
  if (!webhook) throw new NotFoundError(`Webhook ${webhookId} does not exist.`);
  return webhook;
}

/** Deletes a webhook: nothing more is sent to it, not even events already queued. */
export function makeDeleteWebhook({ webhooks, clock }: Pick<WebhookDeps, 'webhooks' | 'clock'>) {
  return async (principal: Principal, webhookId: string): Promise<void> => {
    assertCanWrite(principal);
    await ownWebhook(webhooks, principal, webhookId);
    const at = clock.now().toISOString();
    await webhooks.remove(
      principal.teamId,
      webhookId,
      newEvent(
        'webhook.deleted',
        { teamId: principal.teamId, webhookId, actor: actorOf(principal) },
        { at, key: webhookId },
      ),
    );
  };
}

/** A webhook's delivery attempts, newest first. */
export function makeListDeliveries({ webhooks }: Pick<WebhookDeps, 'webhooks'>) {
  return async (principal: Principal, webhookId: string, page: PageRequest): Promise<Page<Delivery>> => {
    await ownWebhook(webhooks, principal, webhookId);
    return webhooks.listDeliveries(webhookId, page);
  };
}
