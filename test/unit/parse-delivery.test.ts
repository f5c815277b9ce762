import { execFileSync } from 'node:child_process';
import { RelayError } from '../../src/shared';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildEnvelope, buildReportData, NETBOX_VERSIONS, pythonJsonDumps } from '../helpers/netbox-json';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof RelayError ? error.code : `not a RelayError: ${String(error)}`;
  }
  return undefined;
}

describe('the fixture serializer writes what Python json.dumps writes', () => {
  it('matches python3 byte for byte on an envelope with non-ASCII, emoji and control characters', () => {
    const envelope = buildEnvelope({
      version: '4.6',
      data: buildReportData({
        custom_fields: { owner: 'Netzwerk-B\u00fcro', note: 'tab\there "quoted" \\ \ud83d\ude00', empty: null, n: 1.5 },
      }),
    });
    const ours = pythonJsonDumps(envelope);
    const python = execFileSync('python3', ['-c', 'import json,sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read())))'], {
      input: JSON.stringify(envelope),
    }).toString('utf8');
    expect(ours).toBe(python);
    expect(ours).toContain('\\u00fc');
    expect(ours).toContain('\\ud83d\\ude00');
  });
});

describe('parseDelivery accepts every envelope NetBox 3.4 → 4.7 sends', () => {
  it.each(NETBOX_VERSIONS)('NetBox %s: a created compliance report is a report delivery', (version) => {
    const delivery = parseDelivery(buildBody({ version, username: 'jdoe' }));
    expect(delivery.kind).toBe('report');
    if (delivery.kind !== 'report') return;
    expect(delivery.report.id).toBe(29);
    expect(delivery.dedupKey).toBe('29@2023-04-12T19:36:33.690567Z');
    expect(delivery.triggeredBy).toBe('jdoe');
    // ≤ 3.6.5 writes a space between date and time; the relay normalizes both to ISO.
    expect(delivery.completedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('reads the space timestamp of NetBox ≤ 3.6.5 and the ISO one of later versions as the same instant', () => {
    const a = parseDelivery(buildBody({ version: '3.6.5', timestamp: '2023-04-12 19:36:37.739906+00:00' }));
    const b = parseDelivery(buildBody({ version: '4.6', timestamp: '2023-04-12T19:36:37.739906+00:00' }));
    expect(a.kind === 'report' && a.completedAt).toBe('2023-04-12T19:36:37.739Z');
    expect(b.kind === 'report' && b.completedAt).toBe('2023-04-12T19:36:37.739Z');
  });

  it('keeps event-rule action_data merged into data and extra top-level keys', () => {
    const data = { ...buildReportData(), team: 'core-network' };
    const delivery = parseDelivery(buildBody({ version: '4.5', data, extra: { context: { plugin: 'x' } } }));
    expect(delivery.kind === 'report' && (delivery.report as Record<string, unknown>).team).toBe('core-network');
  });

  it('takes the user from request.user (4.6+) when username is gone (4.7)', () => {
    const delivery = parseDelivery(buildBody({ version: '4.7', username: 'ops-bot' }));
    expect(delivery.kind === 'report' && delivery.triggeredBy).toBe('ops-bot');
  });

  it('two NetBox instances with the same report id but different creation times do not collide', () => {
    const a = parseDelivery(buildBody({ data: buildReportData({ id: 7, created: '2026-01-01T00:00:00.000001Z' }) }));
    const b = parseDelivery(buildBody({ data: buildReportData({ id: 7, created: '2026-01-02T00:00:00.000001Z' }) }));
    expect(a.kind === 'report' && b.kind === 'report' && a.dedupKey !== b.dedupKey).toBe(true);
  });
});

describe('parseDelivery ignores what is not a new compliance report', () => {
  it.each(['updated', 'deleted', 'job_started', 'job_ended'])('event %s is ignored with a reason', (event) => {
    const delivery = parseDelivery(buildBody({ event }));
    expect(delivery).toEqual({ kind: 'ignored', reason: expect.stringContaining(event) });
  });

  it('another object type is ignored', () => {
    const envelope = { ...buildEnvelope({ version: '4.6' }), object_type: 'dcim.device', data: { id: 1, name: 'sw1' } };
    const delivery = parseDelivery(Buffer.from(pythonJsonDumps(envelope)));
    expect(delivery).toEqual({ kind: 'ignored', reason: expect.stringContaining('dcim.device') });
  });
});

describe('parseDelivery rejects bad input with a stable code and every issue', () => {
  it('BODY_NOT_JSON for truncated JSON, BODY_NOT_UTF8 for invalid UTF-8', () => {
    const body = buildBody();
    expect(codeOf(() => parseDelivery(body.subarray(0, body.length - 5)))).toBe('BODY_NOT_JSON');
    expect(codeOf(() => parseDelivery(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])))).toBe('BODY_NOT_UTF8');
    expect(codeOf(() => parseDelivery(Buffer.alloc(0)))).toBe('BODY_NOT_JSON');
  });

  it('ENVELOPE_INVALID when the body is JSON but not an event', () => {
    expect(codeOf(() => parseDelivery(Buffer.from('[1, 2]')))).toBe('ENVELOPE_INVALID');
    expect(codeOf(() => parseDelivery(Buffer.from('{"data": {}}')))).toBe('ENVELOPE_INVALID');
  });

  it('REPORT_INVALID lists each field path and why', () => {
    const data = { ...buildReportData(), high_passed: -1, total_passed: 9, total_count: 8, id: 'x' };
    let error: RelayError | undefined;
    try {
      parseDelivery(buildBody({ data }));
    } catch (e) {
      error = e as RelayError;
    }
    expect(error?.code).toBe('REPORT_INVALID');
    const paths = error?.issues?.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['data.id', 'data.high_passed']));
    expect(error?.issues?.every((i) => i.message.length > 0)).toBe(true);
  });

  it('REPORT_INVALID when passed exceeds count, or a count is fractional or beyond safe integers', () => {
    expect(codeOf(() => parseDelivery(buildBody({ data: { ...buildReportData(), total_passed: 9, total_count: 8 } })))).toBe(
      'REPORT_INVALID',
    );
    expect(codeOf(() => parseDelivery(buildBody({ data: { ...buildReportData(), low_count: 1.5 } })))).toBe('REPORT_INVALID');
    expect(
      codeOf(() => parseDelivery(Buffer.from(pythonJsonDumps(buildEnvelope()).replace('"device_count": 3', '"device_count": 1e400')))),
    ).toBe('REPORT_INVALID');
  });
});
