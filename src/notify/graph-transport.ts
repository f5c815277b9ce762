import { buildFailureFacts } from '../shared';
import type * as GraphModule from './create-graph-notifier';
import { configureGraph, GRAPH_SETTINGS, type GraphConfig, type GraphEnv } from './graph-settings';
import type { TransportDescriptor } from './notifier';
import { OAUTH2_FAILURES, oauth2Secrets } from './oauth2-settings';

/** sendMail requests in flight at once: Exchange Online allows 4 per app and mailbox, so more only earns 429s. */
export const GRAPH_CONCURRENCY = 4;

const graph = buildFailureFacts.bind(undefined, 'Graph');

/** Microsoft Graph, when MAIL_TRANSPORT=graph; its code and OAuth2's load only when it is chosen. */
export const graphTransport: TransportDescriptor<'graph', GraphConfig, typeof GRAPH_SETTINGS> = {
  name: 'graph',
  settings: GRAPH_SETTINGS,
  choice: "Microsoft Graph's sendMail as MAIL_FROM's address, with the OAUTH2_* settings",
  configure: (env, context) => configureGraph(env as GraphEnv, context),
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
