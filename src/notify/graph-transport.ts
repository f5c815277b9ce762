import { systemClock } from '../shared';
import type * as AccessTokenModule from './fetch-access-token';
import type * as TokenCacheModule from './create-token-cache';
import type * as GraphModule from './create-graph-notifier';
import type { NotifierSettings, TransportDescriptor } from './notifier';

/** Microsoft Graph, when MAIL_TRANSPORT=graph; its code and OAuth2's load only when it is chosen. */
export const graphTransport: TransportDescriptor = {
  name: 'graph',
  selects: (settings) => settings.graph !== undefined,
  create(settings, io) {
    const graph = graphOf(settings);
    /* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose: Graph's and OAuth2's code only when MAIL_TRANSPORT=graph */
    const { createTokenCache } = require('./create-token-cache') as typeof TokenCacheModule;
    const { createAccessTokenFetcher } = require('./fetch-access-token') as typeof AccessTokenModule;
    const { createGraphNotifier } = require('./create-graph-notifier') as typeof GraphModule;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const clock = io.clock ?? systemClock;
    const tokens = createTokenCache({ fetchToken: createAccessTokenFetcher(graph.oauth2, { clock, fetch: io.fetch }), clock });
    return createGraphNotifier(graph, { tokens, clock, fetch: io.fetch });
  },
  describeStart: (settings) => `Microsoft Graph as ${graphOf(settings).sender}`,
  describeVerified: (settings) => `Microsoft Graph gave a token for ${graphOf(settings).sender}; no mail was sent.`,
};

function graphOf(settings: NotifierSettings) {
  if (!settings.graph) throw new Error('the Graph transport was chosen without Graph settings');
  return settings.graph;
}
