import type { DigestPeriod } from './types';

/** A `digest_periods` row as both engines read it. */
export interface DigestPeriodRow {
  route: string;
  period_start: number;
  period_end: number;
  delivery_id: number | null;
  late: number;
  queued_at: number;
}

/** Turns the row into the period the Store interface returns. */
export function decodeDigestPeriodRow(row: DigestPeriodRow): DigestPeriod {
  return {
    route: row.route,
    periodStart: Number(row.period_start),
    periodEnd: Number(row.period_end),
    deliveryId: row.delivery_id === null ? null : Number(row.delivery_id),
    late: Number(row.late) === 1,
    queuedAt: Number(row.queued_at),
  };
}
