import { fileTransport } from './file-transport';
import { graphTransport } from './graph-transport';
import { smtpTransport } from './smtp-transport';
import type { Notifier, NotifierIo, NotifierSettings, TransportDescriptor } from './notifier';

/** Every transport the relay knows, most specific first: the first whose settings are present is used. */
export const TRANSPORTS: readonly TransportDescriptor[] = [graphTransport, smtpTransport, fileTransport];

/** The transport `settings` select: Graph (MAIL_TRANSPORT=graph), the SMTP pool when SMTP_URL is set, otherwise `.eml` files. */
export function findTransport(settings: NotifierSettings, transports: readonly TransportDescriptor[] = TRANSPORTS): TransportDescriptor {
  const found = transports.find((transport) => transport.selects(settings));
  if (!found) throw new Error(`no transport fits the configuration (known: ${transports.map((t) => t.name).join(', ')})`);
  return found;
}

/** The relay's notifier for `settings` (the core does not touch the disk or the network itself). */
export function createNotifier(
  settings: NotifierSettings,
  io: NotifierIo,
  transports: readonly TransportDescriptor[] = TRANSPORTS,
): Notifier {
  return findTransport(settings, transports).create(settings, io);
}
