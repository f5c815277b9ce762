import { Statement } from './statement';
import type { CatchUpState } from './types';

/** A `catch_up_sources` row as both engines read it. */
type CatchUpRow = { createdMs: number | null; reportId: number | null; succeededAt: number | null };
const CATCH_UP_COLUMNS = 'seen_created_ms AS "createdMs", seen_report_id AS "reportId", succeeded_at AS "succeededAt"';

export const catchUpQueries = {
  /**
   * One statement: the row is created with the lease, or the lease moves to `owner` only when it expired
   * (or is already its own). A replica that loses gets no row back; on PostgreSQL a concurrent upsert of
   * the same source waits for the winner's commit, then finds the lease taken.
   */
  takeLease: new Statement<{ source: string; owner: string; now: number; until: number }, CatchUpRow>(
    () => `INSERT INTO catch_up_sources (source, lease_owner, lease_until) VALUES (:source, :owner, :until)
       ON CONFLICT (source) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
       WHERE catch_up_sources.lease_until <= :now OR catch_up_sources.lease_owner = :owner
       RETURNING ${CATCH_UP_COLUMNS}`,
  ),
  succeed: new Statement<{ source: string; owner: string; now: number; createdMs: number; reportId: number }>(
    () => `UPDATE catch_up_sources SET seen_created_ms = :createdMs, seen_report_id = :reportId, succeeded_at = :now,
         lease_owner = NULL, lease_until = 0 WHERE source = :source AND lease_owner = :owner`,
  ),
  release: new Statement<{ source: string; owner: string }>(
    () => 'UPDATE catch_up_sources SET lease_owner = NULL, lease_until = 0 WHERE source = :source AND lease_owner = :owner',
  ),
  get: new Statement<{ source: string }, CatchUpRow>(() => `SELECT ${CATCH_UP_COLUMNS} FROM catch_up_sources WHERE source = :source`),
  /** Report ids grow with creation in one NetBox: the highest stored is the newest the relay received. */
  newestStoredReport: new Statement<{ source: string }, { reportId: number; created: string }>(
    () => `SELECT report_id AS "reportId", report_created AS created FROM deliveries WHERE netbox_source = :source AND kind = 'report'
       ORDER BY report_id DESC LIMIT 1`,
  ),
  storedReportIds: new Statement<{ source: string; afterId: number; uptoId: number }, { report_id: number }>(
    () => `SELECT report_id FROM deliveries WHERE netbox_source = :source AND kind = 'report' AND report_id > :afterId
       AND report_id <= :uptoId`,
  ),
  knownKeys: new Statement<{ keys: string[] }, { dedup_key: string }>(
    (d) => `SELECT dedup_key FROM deliveries WHERE dedup_key ${d.inList(':keys')}
       UNION SELECT dedup_key FROM reports WHERE dedup_key ${d.inList(':keys')}`,
  ),
};

export function decodeCatchUpRow({ createdMs, reportId, succeededAt }: CatchUpRow): CatchUpState {
  return { seen: createdMs === null ? null : { createdMs, reportId: reportId ?? 0 }, succeededAt };
}
