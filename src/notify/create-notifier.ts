import type * as Undici from 'undici';
import { chooseProxy, type ProxySettings } from '../shared';
import { classifyFailure } from './classify-failure';
import type { Notifier, NotifierIo, TransportDescriptor } from './notifier';
import { buildFailureCatalogue, findTransport, TRANSPORTS } from './transports';

/**
 * The relay's notifier for the transport in force (the core does not touch the disk or the network itself): its
 * sender, whose every failure is classified against the catalogue of `transports`, so a transport's own codes
 * read as it declared them.
 */
export function createNotifier(
  transport: { name: string; settings: unknown },
  io: NotifierIo,
  transports: readonly TransportDescriptor[] = TRANSPORTS,
): Notifier {
  const sender = findTransport(transport, transports).create(transport.settings, { ...io, fetch: io.fetch ?? createProxyFetch(io.proxy) });
  const catalogue = buildFailureCatalogue(transports);
  return {
    async send(mail) {
      try {
        return await sender.send(mail);
      } catch (error) {
        return { failure: classifyFailure(error, catalogue) };
      }
    },
    verify: (onStep) => sender.verify(onStep),
    close: () => sender.close(),
  };
}

/**
 * A fetch that sends each request through the proxy the environment names for its URL (HTTPS_PROXY,
 * HTTP_PROXY, NO_PROXY: see chooseProxy), with undici's ProxyAgent (a CONNECT tunnel); requests no proxy
 * applies to go out through the global fetch as before. Undefined when no proxy is set: callers keep theirs.
 */
function createProxyFetch(proxy: ProxySettings | undefined): typeof fetch | undefined {
  if (!proxy?.httpProxy && !proxy?.httpsProxy) return undefined;
  const agents = new Map<string, Undici.ProxyAgent>();
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const proxyUrl = chooseProxy(url, proxy);
    if (proxyUrl === undefined) return fetch(input, init);
    // undici's own fetch with its own dispatcher: Node's bundled fetch may be another undici version.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: loaded only when a proxy is in force
    const undici = require('undici') as typeof Undici;
    let agent = agents.get(proxyUrl);
    if (!agent) agents.set(proxyUrl, (agent = new undici.ProxyAgent(proxyUrl)));
    return undici.fetch(url, { ...(init as Undici.RequestInit), dispatcher: agent });
  };
}
