import { createHash } from 'node:crypto';

/**
 * A stable Message-ID for a delivery, so a retried send is recognisably the same mail (RFC 5322 §3.6.4). The
 * hash of the dedup key keeps ids distinct even if a data dir is recreated and delivery ids start again.
 */
export function buildMessageId(options: {
  deliveryId: number;
  reportId: number | null;
  dedupKey: string;
  from: string;
  route?: string;
}): string {
  const hash = createHash('sha256')
    .update(options.dedupKey)
    .update('\0')
    .update(options.route ?? '')
    .digest('hex')
    .slice(0, 16);
  const route = options.route ? `.${slug(options.route)}` : '';
  // A digest (reportId null) is about no one report: `digest.` rather than a `report-0.` that reads as one.
  const subject = options.reportId === null ? 'digest' : `report-${options.reportId}`;
  return `<${subject}.d${options.deliveryId}${route}.${hash}@${domainOf(options.from)}>`;
}

/**
 * The root of a route's mail thread: never sent itself, but every report of the route replies to it (RFC 5322
 * §3.6.4 In-Reply-To/References), which Thunderbird, Apple Mail, Outlook and mutt thread on (Gmail also needs
 * the same subject, which reports of different runs do not have).
 */
export function buildThreadId(options: { from: string; route: string; source?: string }): string {
  // One thread per source and route; the default source keeps the thread it had before sources existed.
  const source = options.source ? `.${slug(options.source)}` : '';
  return `<compliance-thread.${slug(options.route)}${source}@${domainOf(options.from)}>`;
}

const slug = (name: string) => name.replace(/[^A-Za-z0-9-]/g, '-');

function domainOf(from: string): string {
  return /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'compliance-relay.invalid';
}
