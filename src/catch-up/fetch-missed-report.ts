import { NetboxError, type NetboxClient, type RequestBudget } from '../netbox';
import { RelayError } from '../shared';
import { buildNewDelivery, type NewDelivery } from '../store';
import { assignSource, parseDelivery } from '../webhook';
import { REPORTS_PATH } from './list-newer-reports';

/**
 * Fetches one missed report and makes it the delivery its webhook would have stored: the same envelope
 * (event `created`, `validity.compliancereport`), parsed by the webhook's own parser, so the same dedup
 * key, fields and checks; marked as received by the catch-up. `deleted`: NetBox no longer has it;
 * `refused`: it fails the checks a webhook's report must pass (it would have been refused as a webhook too).
 */
export async function fetchMissedReport(
  client: NetboxClient,
  reportId: number,
  context: { source: string; netboxUrl?: string; now: number; budget: RequestBudget },
): Promise<NewDelivery | 'deleted' | { refused: string }> {
  let document: unknown;
  try {
    document = await client.getJson(`${REPORTS_PATH}${reportId}/`, context.budget);
  } catch (error) {
    if (error instanceof NetboxError && error.code === 'NOT_FOUND') return 'deleted';
    throw error;
  }
  const data = toWebhookLinks(document);
  // The webhook's timestamp is the run's end, which the API does not keep: the parser then takes the creation time.
  const envelope = { event: 'created', model: 'compliancereport', object_type: 'validity.compliancereport', data, snapshots: null };
  const body = Buffer.from(JSON.stringify(envelope), 'utf8');
  let parsed;
  try {
    parsed = parseDelivery(body);
  } catch (error) {
    if (error instanceof RelayError)
      return { refused: [error.message, ...(error.issues ?? []).map((i) => `${i.path}: ${i.message}`)].join(' ') };
    throw error;
  }
  if (parsed.kind !== 'report' || parsed.report.id !== reportId)
    throw new NetboxError('PROTOCOL', `NetBox answered ${REPORTS_PATH}${reportId}/ with another object`);
  const delivery = assignSource(parsed, context.source);
  // Queued as its webhook would have been (its history row too, marked late when a newer report was stored first).
  const stored = buildNewDelivery(delivery, { body, sender: 'catch-up', receivedAt: context.now, netboxUrl: context.netboxUrl });
  return { ...stored, receivedVia: 'catch-up' };
}

/**
 * The API builds `url` and `results_url` from the request (absolute, on the host NetBox believes it
 * has); the webhook sends them relative. The path (with NetBox's base path) is what the relay keeps.
 */
function toWebhookLinks(document: unknown): unknown {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return document;
  const data = { ...(document as Record<string, unknown>) };
  for (const key of ['url', 'results_url']) {
    const value = data[key];
    if (typeof value === 'string' && /^https?:\/\//i.test(value)) {
      const url = new URL(value);
      data[key] = `${url.pathname}${url.search}`;
    }
  }
  return data;
}
