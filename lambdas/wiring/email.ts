/*
 * The email adapters of EmailSender: Amazon SES on AWS, a file outbox locally, chosen from
 * the environment on the first email.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import * as z from 'zod/mini';
import type { EmailSender } from '../auth/ports.ts';
import type { Clock } from '../core/ports/common.ts';
import { readConfig } from './config.ts';

/** Amazon SES (v2) adapter: plain-text mail from the verified identity `from`. */
export function makeSesEmailSender(client: SESv2Client, from: string): EmailSender {
  return {
    async send({ to, subject, text }) {
      const { SendEmailCommand } = await loadSes();
      await client.send(
        new SendEmailCommand({
          FromEmailAddress: from,
          Destination: { ToAddresses: [to] },
          Content: {
            Simple: {
              Subject: { Data: subject, Charset: 'UTF-8' },
              Body: { Text: { Data: text, Charset: 'UTF-8' } },
            },
          },
        }),
      );
    },
  };
}

/**
 * The local adapter: each email becomes `<dir>/<timestamp>-<address>.txt`, readable only by the
 * developer (mode 600), so a magic link can be opened without a mail server.
 */
function makeOutboxEmailSender(directory: string, clock: Clock): EmailSender {
  return {
    async send({ to, subject, text }) {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      const stamp = clock.now().toISOString().replace(/[:.]/g, '-');
      const safeAddress = to.replace(/[^A-Za-z0-9@._+-]/g, '_');
      const content = `To: ${to}\nSubject: ${subject}\nDate: ${clock.now().toUTCString()}\n\n${text}`;
      for (let copy = 0; ; copy++) {
        const file = path.join(directory, `${stamp}-${safeAddress}${copy === 0 ? '' : `-${copy}`}.txt`);
        try {
          await writeFile(file, content, { mode: 0o600, flag: 'wx' });
          return;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || copy >= 100) throw error;
        }
      }
    },
  };
}

/**
 * The SES client's module graph is evaluated on the first email, not at every cold start of the
 * function (esbuild inlines the dynamic import and defers its evaluation).
 */
const loadSes = () => import('./ses-client.ts');

/**
 * EMAIL_OUTBOX_DIR selects the file outbox (local stack, tests); otherwise SES sends from
 * EMAIL_FROM. Read on first use, so a missing setting fails the first email, not the import.
 */
export function emailSenderFromEnv(clock: Clock): () => EmailSender {
  let sender: EmailSender | undefined;
  return () => {
    if (sender) return sender;
    const outbox = process.env.EMAIL_OUTBOX_DIR;
    if (outbox) {
      sender = makeOutboxEmailSender(outbox, clock);
      return sender;
    }
    const from = readConfig({ EMAIL_FROM: z.string().check(z.minLength(3)) }).EMAIL_FROM;
    let ses: Promise<EmailSender> | undefined;
    sender = {
      async send(message) {
        ses ??= loadSes().then(({ SESv2Client }) => makeSesEmailSender(new SESv2Client({}), from));
        await (await ses).send(message);
      },
    };
    return sender;
  };
}

/** APP_URL: where magic links point (the browser app, or this API's own base URL). */
export function appUrlFromEnv(): () => string {
  let appUrl: string | undefined;
  return () => {
    appUrl ??= readConfig({ APP_URL: z.url({ protocol: /^https?$/ }) }).APP_URL;
    return appUrl;
  };
}
