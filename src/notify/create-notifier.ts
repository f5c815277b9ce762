import type { GraphConfig, SmtpConfig } from '../config';
import { systemClock } from '../shared';
import type * as AccessTokenModule from './fetch-access-token';
import type * as TokenCacheModule from './create-token-cache';
import type * as GraphModule from './create-graph-notifier';
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
    /* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose: Graph's and OAuth2's code only when MAIL_TRANSPORT=graph */
    const { createTokenCache } = require('./create-token-cache') as typeof TokenCacheModule;
    const { createAccessTokenFetcher } = require('./fetch-access-token') as typeof AccessTokenModule;
    const { createGraphNotifier } = require('./create-graph-notifier') as typeof GraphModule;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const clock = io.clock ?? systemClock;
    const tokens = createTokenCache({ fetchToken: createAccessTokenFetcher(settings.graph.oauth2, { clock, fetch: io.fetch }), clock });
    return createGraphNotifier(settings.graph, { tokens, clock, fetch: io.fetch });
  }
  return settings.smtp ? createSmtpNotifier(settings.smtp, io) : createFileNotifier(settings.mail.outboxDir);
}
