import { RELAY_FAILURES, type FailureCatalogue } from '../shared';
import { createProxyFetch } from './create-proxy-fetch';
import { fileTransport } from './file-transport';
import { graphTransport } from './graph-transport';
import { smtpTransport } from './smtp-transport';
import type { ConfiguredTransport, Notifier, NotifierIo, TransportContext, TransportDescriptor } from './notifier';

/** Every transport the relay knows, most specific first: the first whose settings select it is used. */
export const TRANSPORTS = [graphTransport, smtpTransport, fileTransport] as const;

/**
 * The relay's one catalogue of failure codes: each transport's own (its descriptor's `failures`, listed from the
 * least specific transport, as docs/errors.md shows them) and the relay's, for the transports given (a test's too).
 */
export function buildFailureCatalogue(transports: readonly TransportDescriptor[] = TRANSPORTS): FailureCatalogue {
  return Object.assign({}, ...[...transports].reverse().map((t) => t.failures), RELAY_FAILURES) as FailureCatalogue;
}

/** The catalogue with the relay's own transports: what the retry policy, metrics, the commands and the docs read. */
export const FAILURE_CATALOGUE: FailureCatalogue = buildFailureCatalogue();

/** The transport in force with the relay's own transports: a union narrowed by `name`. */
export type TransportConfig = ConfiguredTransport<(typeof TRANSPORTS)[number]>;

/**
 * Each transport reads its settings (each reports its own problems, such as SMTP_USER without SMTP_URL);
 * the first that is selected is the one in force.
 */
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

/** The relay's notifier for the transport in force (the core does not touch the disk or the network itself). */
export function createNotifier(
  transport: { name: string; settings: unknown },
  io: NotifierIo,
  transports: readonly TransportDescriptor[] = TRANSPORTS,
): Notifier {
  return findTransport(transport, transports).create(transport.settings, { ...io, fetch: io.fetch ?? createProxyFetch(io.proxy) });
}
