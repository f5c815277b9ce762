import { buildFailureFacts, httpUrl, setting } from '../shared';
import type * as GraphModule from './create-graph-notifier';
import type { GraphConfig } from './create-graph-notifier';
import type { SectionEnv, TransportContext, TransportDescriptor } from './notifier';
import { buildOAuth2Config, checkEndpointUrl, OAUTH2_FAILURES, OAUTH2_SETTINGS, oauth2Secrets } from './oauth2-settings';

/** sendMail requests in flight at once: Exchange Online allows 4 per app and mailbox, so more only earns 429s. */
export const GRAPH_CONCURRENCY = 4;

/** Time for one Graph sendMail request. */
export const GRAPH_TIMEOUT_MS = 30_000;

const GRAPH_SETTINGS = {
  GRAPH_URL: setting(httpUrl.default('https://graph.microsoft.com'), {
    group: 'provider',
    description: "Graph's base URL (national clouds; http:// only to a loopback address).",
  }),
  ...OAUTH2_SETTINGS,
};

/** Undefined when MAIL_TRANSPORT is not graph, or OAuth2's settings have problems (pushed onto `issues`). */
function configureGraph(
  e: SectionEnv<typeof GRAPH_SETTINGS> & { MAIL_TRANSPORT: string },
  context: TransportContext,
): GraphConfig | undefined {
  if (e.MAIL_TRANSPORT !== 'graph') return undefined;
  context.requireRecipients('MAIL_TRANSPORT=graph');
  checkEndpointUrl('GRAPH_URL', e.GRAPH_URL, context.issues);
  const oauth2 = buildOAuth2Config(e, { kind: 'graph' }, context);
  // The sender is MAIL_FROM's address: `Name <user@domain>` → `user@domain`.
  const sender = /<([^<>\s]+)>\s*$/.exec(e.MAIL_FROM)?.[1] ?? e.MAIL_FROM.trim();
  return oauth2 && { url: e.GRAPH_URL.replace(/\/+$/, ''), sender, timeoutMs: GRAPH_TIMEOUT_MS, oauth2 };
}

const graph = buildFailureFacts.bind(undefined, 'Graph');

/** Microsoft Graph, when MAIL_TRANSPORT=graph; its code and OAuth2's load only when it is chosen. */
export const graphTransport: TransportDescriptor<'graph', GraphConfig, typeof GRAPH_SETTINGS> = {
  name: 'graph',
  settings: GRAPH_SETTINGS,
  choice: "Microsoft Graph's sendMail as MAIL_FROM's address, with the OAUTH2_* settings",
  configure: (env, context) => configureGraph(env as Parameters<typeof configureGraph>[0], context),
  create(graph, io) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: Graph's and OAuth2's code only when MAIL_TRANSPORT=graph
    const { createGraphSender } = require('./create-graph-notifier') as typeof GraphModule;
    return createGraphSender(graph, io);
  },
  describeStart: (graph) => `Microsoft Graph as ${graph.sender}`,
  describeStartWarnings: () => [],
  describeVerified: (graph) => `Microsoft Graph gave a token for ${graph.sender}; no mail was sent.`,
  describeConfig: (graph) => ({ smtp: 'none: mails go through Microsoft Graph', graph }),
  settingsInForce: () => Object.keys(GRAPH_SETTINGS),
  concurrency: () => GRAPH_CONCURRENCY,
  secrets: (graph) => oauth2Secrets(graph.oauth2),
  failures: {
    ...OAUTH2_FAILURES,
    GRAPH_THROTTLED: graph(true, 'server', 'Microsoft Graph asked to slow down (429); the queue waits at least its Retry-After.'),
    GRAPH_UNAVAILABLE: graph(true, 'server', 'Microsoft Graph could not be reached or failed (5xx).'),
    GRAPH_ACCESS_DENIED: graph(
      true,
      'server',
      'Microsoft Graph refused to send as this mailbox (403/404: permission Mail.Send, or no such mailbox).',
      { held: true },
    ),
    GRAPH_REJECTED: graph(false, 'message', 'Microsoft Graph refused this message (a 4xx about it: a recipient, its size).', {
      answered: true,
    }),
  },
};
