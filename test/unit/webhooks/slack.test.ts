import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, newEvent } from '../../../lambdas/core/events.ts';
import { slackRequest } from '../../../lambdas/webhooks/deliver.ts';
import { slackMessage } from '../../../lambdas/webhooks/slack.ts';

const actor = { userId: 'system', credential: 'system' } as const;

describe('the Slack format of a delivery', () => {
  it.each(EVENT_TYPES)(
    'writes %s as a Slack message: a sentence as text, it and the figures as blocks',
    (type) => {
      const event = newEvent(
        type,
        { teamId: 't1', pipelineId: 'p1', runId: 'r1', actor },
        { at: '2026-12-03T10:00:00.000Z', key: 'k' },
      );
      const message = slackMessage(event);
      expect(message.text.length).toBeGreaterThan(10);
      expect(message.text).not.toContain('undefined');
      expect(message.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: message.text } });
      expect(JSON.stringify(message.blocks[1])).toContain(type);
    },
  );

  it("says what a monitor saw, and links to the app's page with a button", () => {
    const event = newEvent(
      'monitor.alerted',
      {
        teamId: 't1',
        pipelineId: 'p1',
        monitorId: 'm1',
        status: 'alert',
        value: 0.25,
        link: 'https://app.example.com/app/pipelines/p1#monitors',
        monitor: {
          id: 'm1',
          name: 'Failures <b>high</b>',
          metric: 'failure_rate',
          kind: null,
          comparator: 'above',
          threshold: 0.1,
          windowMinutes: 15,
          minExecutions: 1,
        },
        actor,
      },
      { at: '2026-12-03T10:00:00.000Z', key: 'm1-1' },
    );
    const message = slackMessage(event);
    expect(message.text).toBe(
      ':rotating_light: Alert: monitor "Failures &lt;b&gt;high&lt;/b&gt;" of pipeline p1 — failure_rate 0.25, threshold above 0.1 over 15 min.',
    );
    expect(message.blocks.at(-1)).toEqual({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Open in the app' },
          url: 'https://app.example.com/app/pipelines/p1#monitors',
        },
      ],
    });
  });

  it('is posted as JSON without a signature: the URL is the secret', () => {
    const event = newEvent(
      'rollout.promoted',
      { teamId: 't1', pipelineId: 'p1', actor },
      { at: '2026-12-03T10:00:00.000Z', key: 'r' },
    );
    const request = slackRequest(event);
    expect(request.headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'pipeline-synthesis-webhooks/1',
    });
    expect(JSON.parse(request.body)).toEqual(slackMessage(event));
  });
});
