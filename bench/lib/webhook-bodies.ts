import { buildBody, buildReportData, netboxSignature } from '../../test/helpers/netbox-json';

/** A placeholder id no real field contains, replaced per request. */
const ID_MARKER = '987654321';

export interface SignedBody {
  id: number;
  body: Buffer;
  /** X-Hook-Signature, or undefined when unsigned. */
  signature?: string;
}

/**
 * Bodies exactly as NetBox 4.6 sends them (the independent test helper writes Python's json.dumps
 * bytes), each with a distinct report id so no delivery is a duplicate, signed like NetBox.
 */
export function createBodyFactory(options: { secret?: string; firstId: number }): { next(): SignedBody; readonly size: number } {
  const template = buildBody({
    version: '4.6',
    data: buildReportData({
      id: Number(ID_MARKER),
      total_passed: 41,
      total_count: 57,
      low_passed: 10,
      low_count: 12,
      middle_passed: 20,
      middle_count: 25,
      high_passed: 11,
      high_count: 20,
    }),
  }).toString('utf8');
  const parts = template.split(ID_MARKER);
  let id = options.firstId;
  return {
    size: Buffer.byteLength(template),
    next() {
      const current = id++;
      const body = Buffer.from(parts.join(String(current)), 'utf8');
      return { id: current, body, signature: options.secret ? netboxSignature(body, options.secret) : undefined };
    },
  };
}
