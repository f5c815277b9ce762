import { httpUrl, setting } from '../shared';
import type { SectionEnv, TransportContext } from './notifier';
import { buildOAuth2Config, checkEndpointUrl, OAUTH2_SETTINGS } from './oauth2-settings';

/** Time for one Graph sendMail request. */
export const GRAPH_TIMEOUT_MS = 30_000;

/** Microsoft Graph's settings (MAIL_TRANSPORT=graph chooses it): its URL, and OAuth2's, with which it logs in. */
export const GRAPH_SETTINGS = {
  GRAPH_URL: setting(httpUrl.default('https://graph.microsoft.com'), {
    group: 'provider',
    description: "Graph's base URL (national clouds; http:// only to a loopback address).",
  }),
  ...OAUTH2_SETTINGS,
};

/** What the Graph transport reads: its section (OAuth2's included) and MAIL_TRANSPORT. */
export type GraphEnv = SectionEnv<typeof GRAPH_SETTINGS> & { MAIL_TRANSPORT: string };

/** MAIL_TRANSPORT=graph: mails go to Microsoft Graph's sendMail as `sender`, with a token from `oauth2`. */
export type GraphConfig = NonNullable<ReturnType<typeof configureGraph>>;

/** Graph's configuration, or undefined when MAIL_TRANSPORT is not graph (or OAuth2's settings have problems, pushed onto `issues`). */
export function configureGraph(e: GraphEnv, context: TransportContext) {
  if (e.MAIL_TRANSPORT !== 'graph') return undefined;
  context.requireRecipients('MAIL_TRANSPORT=graph');
  checkEndpointUrl('GRAPH_URL', e.GRAPH_URL, context.issues);
  const oauth2 = buildOAuth2Config(e, { kind: 'graph' }, context);
  // The sender is MAIL_FROM's address: `Name <user@domain>` → `user@domain`.
  const sender = /<([^<>\s]+)>\s*$/.exec(e.MAIL_FROM)?.[1] ?? e.MAIL_FROM.trim();
  return oauth2 && { url: e.GRAPH_URL.replace(/\/+$/, ''), sender, timeoutMs: GRAPH_TIMEOUT_MS, oauth2 };
}
