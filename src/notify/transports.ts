import type * as Undici from 'undici';
import { z } from 'zod';
import { chooseProxy, RELAY_FAILURES, setting, type FailureCatalogue, type ProxySettings } from '../shared';
import { classifyFailure } from './classify-failure';
import { fileTransport } from './file-transport';
import { graphTransport } from './graph-transport';
import { smtpTransport } from './smtp-transport';
import type { ConfiguredTransport, Notifier, NotifierIo, TransportContext, TransportDescriptor } from './notifier';

/** Every transport, most specific first (the first selected is used): settings, choices and failure codes derive from it. */
export const TRANSPORTS = [graphTransport, smtpTransport, fileTransport] as const;

/** MAIL_TRANSPORT, choosing among the transports with a `choice`, then each transport's own section. */
export function buildTransportSettings<const T extends readonly TransportDescriptor[]>(transports: T) {
  // Least specific first, as the references list them: the default, SMTP, leads.
  const chosen = transports.filter((t) => t.choice !== undefined).reverse();
  const names = chosen.map((t) => t.name) as [T[number]['name'], ...T[number]['name'][]];
  const choice = setting(z.enum(names).default(names[0]), {
    group: 'provider',
    description: `${chosen.map((t) => `${t.name}: ${t.choice}`).join('; ')}.`,
  });
  return Object.assign({ MAIL_TRANSPORT: choice }, ...transports.map((t) => t.settings)) as {
    MAIL_TRANSPORT: typeof choice;
  } & UnionToIntersection<T[number]['settings']>;
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The relay's one catalogue of failure codes: each transport's own (least specific first, as docs/errors.md shows them) and the relay's. */
export function buildFailureCatalogue(transports: readonly TransportDescriptor[] = TRANSPORTS): FailureCatalogue {
  return Object.assign({}, ...[...transports].reverse().map((t) => t.failures), RELAY_FAILURES) as FailureCatalogue;
}

/** The catalogue of the relay's own transports, as the docs show it. */
export const FAILURE_CATALOGUE: FailureCatalogue = buildFailureCatalogue();

/** The transport in force with the relay's own transports: a union narrowed by `name`. */
export type TransportConfig = ConfiguredTransport<(typeof TRANSPORTS)[number]>;

/** Each transport reads its settings and reports its own problems; the first that is selected is the one in force. */
export function configureTransport(
  env: Readonly<Record<string, unknown>>,
  context: TransportContext,
  transports: readonly TransportDescriptor[] = TRANSPORTS,
): TransportConfig {
  let chosen: { name: string; settings: unknown } | undefined;
  for (const transport of transports) {
    const settings = transport.configure(env, context);
    if (settings !== undefined) chosen ??= { name: transport.name, settings };
  }
  // The file transport takes any configuration; a list without it may choose none (the problems say why).
  return (chosen ?? { name: fileTransport.name, settings: { outboxDir: context.outboxDir } }) as TransportConfig;
}

/** The descriptor of the transport in force. */
export function findTransport(transport: { name: string }, transports: readonly TransportDescriptor[] = TRANSPORTS): TransportDescriptor {
  const found = transports.find((t) => t.name === transport.name);
  if (!found) throw new Error(`no transport is named ${transport.name} (known: ${transports.map((t) => t.name).join(', ')})`);
  return found;
}

/** The notifier of the transport in force: its sender, every failure classified against the catalogue of `transports`. */
export function createNotifier(
  transport: { name: string; settings: unknown },
  io: NotifierIo,
  transports: readonly TransportDescriptor[] = TRANSPORTS,
): Notifier {
  const sender = findTransport(transport, transports).create(transport.settings, { ...io, fetch: io.fetch ?? createProxyFetch(io.proxy) });
  const catalogue = buildFailureCatalogue(transports);
  return {
    ...sender,
    async send(mail) {
      try {
        return await sender.send(mail);
      } catch (error) {
        return { failure: classifyFailure(error, catalogue) };
      }
    },
  };
}

/** A fetch through the proxy chooseProxy names for each URL (undici's CONNECT tunnel); undefined when no proxy is set. */
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
