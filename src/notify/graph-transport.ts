import { z } from 'zod';
import { httpUrl, setting } from '../shared';
import type * as GraphModule from './create-graph-notifier';
import type { GraphConfig } from './create-graph-notifier';
import type { SectionEnv, TransportContext, TransportDescriptor } from './notifier';
import { GRAPH_FAILURES } from './transport-failures';
import { buildOAuth2Config, checkEndpointUrl, OAUTH2_SETTINGS, oauth2Secrets } from './oauth2-settings';

/** sendMail requests in flight at once: Exchange Online allows 4 per app and mailbox, so more only earns 429s. */
export const GRAPH_CONCURRENCY = 4;

/** Time for one Graph sendMail request. */
export const GRAPH_TIMEOUT_MS = 30_000;

/** Microsoft Graph's settings: MAIL_TRANSPORT chooses it, and it logs in with OAuth2's. */
export const GRAPH_SETTINGS = {
  MAIL_TRANSPORT: setting(z.enum(['smtp', 'graph']).default('smtp'), {
    group: 'provider',
    description:
      "smtp: SMTP_URL (or .eml files), logging in with AUTH XOAUTH2 when OAUTH2_CLIENT_ID or OAUTH2_SERVICE_ACCOUNT_FILE is set; graph: Microsoft Graph's sendMail as MAIL_FROM's address, with the OAUTH2_* settings.",
  }),
  GRAPH_URL: setting(httpUrl.default('https://graph.microsoft.com'), {
    group: 'provider',
    description: "Graph's base URL (national clouds; http:// only to a loopback address).",
  }),
  ...OAUTH2_SETTINGS,
};

/** Microsoft Graph, when MAIL_TRANSPORT=graph; its code and OAuth2's load only when it is chosen. */
export const graphTransport: TransportDescriptor<'graph', GraphConfig> = {
  name: 'graph',
  settings: GRAPH_SETTINGS,
  configure: (env, context) => configureGraph(env as SectionEnv<typeof GRAPH_SETTINGS>, context),
  create(graph, io) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: Graph's and OAuth2's code only when MAIL_TRANSPORT=graph
    const { createGraphNotifier } = require('./create-graph-notifier') as typeof GraphModule;
    return createGraphNotifier(graph, io);
  },
  describeStart: (graph) => `Microsoft Graph as ${graph.sender}`,
  describeVerified: (graph) => `Microsoft Graph gave a token for ${graph.sender}; no mail was sent.`,
  concurrency: (graph) => graph.concurrency,
  secrets: (graph) => oauth2Secrets(graph.oauth2),
  failures: GRAPH_FAILURES,
};

/** MAIL_TRANSPORT=graph: the sender mailbox (MAIL_FROM's address), Graph's URL and the app's credentials. */
function configureGraph(e: SectionEnv<typeof GRAPH_SETTINGS>, context: TransportContext): GraphConfig | undefined {
  if (e.MAIL_TRANSPORT !== 'graph') return undefined;
  context.requireRecipients('MAIL_TRANSPORT=graph');
  checkEndpointUrl('GRAPH_URL', e.GRAPH_URL, context.issues);
  const oauth2 = buildOAuth2Config(e, { kind: 'graph' }, context);
  if (!oauth2) return undefined;
  return {
    url: e.GRAPH_URL.replace(/\/+$/, ''),
    // MAIL_FROM's address: `Name <user@domain>` → `user@domain`.
    sender: /<([^<>\s]+)>\s*$/.exec(e.MAIL_FROM)?.[1] ?? e.MAIL_FROM.trim(),
    timeoutMs: GRAPH_TIMEOUT_MS,
    concurrency: GRAPH_CONCURRENCY,
    oauth2,
  };
}
