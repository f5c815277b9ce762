import type { Config } from './config';
import { buildReportView, type ReportView } from './mail';
import { parseDelivery, type ReportDelivery } from './webhook';

/**
 * The delivery recorded in validity's documentation (NetBox ≤ 3.6 era): report 29, 5 of 8 MIDDLE
 * results passed. Used to check templates at boot and by `send-test`; examples/ has it as raw bytes.
 */
export const SAMPLE_ENVELOPE = {
  event: 'created',
  timestamp: '2023-04-12 19:36:37.739906+00:00',
  model: 'compliancereport',
  username: 'admin',
  request_id: 'fc577b60-3f63-4402-8661-547adfefdd87',
  data: {
    id: 29,
    url: '/api/plugins/validity/reports/29/',
    display: 'report-29',
    device_count: 3,
    test_count: 3,
    total_passed: 5,
    total_count: 8,
    low_passed: 0,
    low_count: 0,
    middle_passed: 5,
    middle_count: 8,
    high_passed: 0,
    high_count: 0,
    results_url: '/api/plugins/validity/test-results/?report_id=29',
    custom_fields: {},
    created: '2023-04-12T19:36:33.690567Z',
    last_updated: '2023-04-12T19:36:33.690588Z',
  },
  snapshots: {
    prechange: null,
    postchange: { created: '2023-04-12T19:36:33.690Z', last_updated: '2023-04-12T19:36:33.690Z', custom_fields: {} },
  },
} as const;

export function sampleDelivery(): ReportDelivery {
  const parsed = parseDelivery(Buffer.from(JSON.stringify(SAMPLE_ENVELOPE)));
  if (parsed.kind !== 'report') throw new Error('the built-in sample is not a report');
  return parsed;
}

export function sampleDeliveryView(config: Pick<Config, 'mail' | 'netbox'>): ReportView {
  return buildReportView(sampleDelivery(), { netboxUrl: config.netbox.url, timezone: config.mail.timezone });
}
