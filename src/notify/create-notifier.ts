import { classifyFailure } from './classify-failure';
import { createProxyFetch } from './create-proxy-fetch';
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
    kind: transport.name,
    async send(mail) {
      try {
        return { status: 'sent', ...(await sender.send(mail)) };
      } catch (error) {
        const failure = classifyFailure(error, catalogue);
        return failure.kind === 'transient' ? { status: 'retry', failure } : { status: 'failed', failure };
      }
    },
    verify: (onStep) => sender.verify(onStep),
    close: () => sender.close(),
  };
}
