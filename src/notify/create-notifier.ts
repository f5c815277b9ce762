import type { GraphConfig, SmtpConfig } from '../config';
import { systemClock } from '../shared';
import { createAccessTokenFetcher } from './fetch-access-token';
import { createTokenCache } from './create-token-cache';
import { createGraphNotifier } from './create-graph-notifier';
import { createSmtpNotifier } from './create-smtp-notifier';
import { createFileNotifier } from './create-file-notifier';
import type { Notifier, NotifierIo } from './notifier';

/** Where the relay's mails go, as configured: Graph, SMTP_URL, otherwise `.eml` files in the outbox directory. */
export interface NotifierSettings {
  smtp?: SmtpConfig;
  graph?: GraphConfig;
  mail: { outboxDir: string };
}

/**
 * The relay's notifier for `settings`: Microsoft Graph (MAIL_TRANSPORT=graph), the SMTP pool when an
 * SMTP server is configured, otherwise `.eml` files (the core does not touch the disk itself).
 */
export function createNotifier(settings: NotifierSettings, io: NotifierIo): Notifier {
  if (settings.graph) {
    const clock = io.clock ?? systemClock;
    const tokens = createTokenCache({ fetchToken: createAccessTokenFetcher(settings.graph.oauth2, { clock, fetch: io.fetch }), clock });
    return createGraphNotifier(settings.graph, { tokens, clock, fetch: io.fetch });
  }
  return settings.smtp ? createSmtpNotifier(settings.smtp, io) : createFileNotifier(settings.mail.outboxDir);
}
