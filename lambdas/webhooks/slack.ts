/*
 * The Slack format of a delivery (a webhook with `format: "slack"`): the body of a Slack incoming
 * webhook, `{text, blocks}`, one sentence per event type (a table), the event's figures as fields
 * and a link to the app where the event has one. Unsigned: Slack's URL is the secret.
 */
import type { DomainEvent, EventData, EventType } from '../core/events.ts';

/** Slack's incoming-webhook body: `text` is the notification's fallback, `blocks` the message. */
export interface SlackMessage {
  text: string;
  blocks: Array<Record<string, unknown>>;
}

const pipeline = (data: EventData) =>
  data.pipelineName ? `pipeline ${data.pipelineName}` : `pipeline ${data.pipelineId ?? '?'}`;
const run = (data: EventData) => `run ${data.runId ?? '?'} of ${pipeline(data)}`;
const rollout = (data: EventData) => `the rollout of ${pipeline(data)}`;
const monitor = (data: EventData) =>
  `monitor "${data.monitor?.name ?? data.monitorId ?? '?'}" of ${pipeline(data)}`;

/** What happened, in one sentence, by event type. */
const SENTENCES: Record<EventType, (data: EventData) => string> = {
  'synthesis_run.generated': (data) => `Synthesis ${run(data)} is generated and waits for review.`,
  'synthesis_run.failed': (data) => `Synthesis ${run(data)} failed.`,
  'synthesis_run.approved': (data) => `Synthesis ${run(data)} was approved.`,
  'synthesis_run.rejected': (data) => `Synthesis ${run(data)} was rejected.`,
  'synthesis_run.evaluated': (data) => `Synthesis ${run(data)} was evaluated.`,
  'configuration.activated': (data) => `A configuration of ${pipeline(data)} was activated.`,
  'rollout.started': (data) => `A rollout of ${pipeline(data)} started.`,
  'rollout.stepped': (data) => `${capitalized(rollout(data))} stepped to ${data.percent ?? '?'} %.`,
  'rollout.promoted': (data) => `${capitalized(rollout(data))} was promoted.`,
  'rollout.rolled_back': (data) => `${capitalized(rollout(data))} was rolled back.`,
  'pipeline.deleted': (data) => `${capitalized(pipeline(data))} was deleted.`,
  'api_token.created': () => 'An API token was created.',
  'api_token.revoked': () => 'An API token was revoked.',
  'webhook.created': () => 'A webhook was created.',
  'webhook.deleted': () => 'A webhook was deleted.',
  'approval_rules.updated': (data) => `The approval rules of ${pipeline(data)} changed.`,
  'team_settings.updated': () => "The team's settings changed.",
  'member.invited': () => 'Someone was invited to the team.',
  'member.joined': () => 'Someone joined the team.',
  'member.role_changed': (data) => `A member's role changed to ${data.role ?? '?'}.`,
  'member.removed': () => 'A member was removed from the team.',
  'invitation.revoked': () => 'An invitation was revoked.',
  'monitor.alerted': (data) => `:rotating_light: Alert: ${monitor(data)} — ${monitorFigure(data)}.`,
  'monitor.resolved': (data) => `:white_check_mark: Resolved: ${monitor(data)} — ${monitorFigure(data)}.`,
  'monitor.no_data': (data) => `No data: ${monitor(data)} has too few samples in its window to judge.`,
};

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "failure_rate 0.25, above 0.1 over 15 min". */
function monitorFigure(data: EventData): string {
  const watched = data.monitor;
  if (!watched) return `value ${data.value ?? 'none'}`;
  const metric = watched.kind ? `${watched.metric} (${watched.kind})` : watched.metric;
  return `${metric} ${data.value ?? 'none'}, threshold ${watched.comparator} ${watched.threshold} over ${watched.windowMinutes} min`;
}

/** Slack's mrkdwn escapes (&, <, >): ids and names are shown, never parsed as links or mentions. */
function escaped(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The Slack message of an event. */
export function slackMessage(event: DomainEvent): SlackMessage {
  const sentence = escaped(SENTENCES[event.type](event.data));
  const by = event.data.actor.name ?? event.data.actor.userId;
  const fields = [
    `*Event*\n${event.type}`,
    `*When*\n${event.timestamp}`,
    ...(event.data.status ? [`*Status*\n${escaped(event.data.status)}`] : []),
    `*By*\n${escaped(by)}`,
  ];
  const blocks: Array<Record<string, unknown>> = [
    { type: 'section', text: { type: 'mrkdwn', text: sentence } },
    { type: 'section', fields: fields.map((text) => ({ type: 'mrkdwn', text })) },
  ];
  if (event.data.link && /^https?:\/\//.test(event.data.link)) {
    blocks.push({
      type: 'actions',
      elements: [
        { type: 'button', text: { type: 'plain_text', text: 'Open in the app' }, url: event.data.link },
      ],
    });
  }
  return { text: sentence, blocks };
}
