import { MIGRATION_001_DELIVERIES } from './001-deliveries';
import { MIGRATION_002_REPORTS } from './002-reports';
import { MIGRATION_003_WATCHDOG } from './003-watchdog';
import { MIGRATION_004_SENT_MESSAGES } from './004-sent-messages';
import { MIGRATION_005_ROUTE_MAILS } from './005-route-mails';
import { MIGRATION_006_DELIVERY_REPORT_FIELDS } from './006-delivery-report-fields';
import { MIGRATION_007_SENT_MESSAGES_PER_ROUTE } from './007-sent-messages-per-route';
import { MIGRATION_008_DELIVERY_LIST_INDEXES } from './008-delivery-list-indexes';
import { MIGRATION_009_NETBOX_SOURCES } from './009-netbox-sources';
import { MIGRATION_010_DIGEST_PERIODS } from './010-digest-periods';
import { MIGRATION_011_ROUTE_MAIL_OWNER_GROUPS } from './011-route-mail-owner-groups';
import { MIGRATION_012_REPORTS_FAILING_INDEX } from './012-reports-failing-index';
import { MIGRATION_013_WAIVERS } from './013-waivers';
import { MIGRATION_014_DELIVERY_KIND } from './014-delivery-kind';
import { MIGRATION_015_REPORT_ARRIVAL } from './015-report-arrival';
import { MIGRATION_016_REPORT_PAIR_STATES } from './016-report-pair-states';
import { MIGRATION_017_CATCH_UP } from './017-catch-up';

/** One versioned schema change; `sql` runs in one transaction. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/**
 * PostgreSQL schema migrations, one file per version (TypeScript modules rather than .sql files, so
 * that dist/ and src/ find them the same way). Applied in order under an advisory lock and recorded
 * in `schema_migrations`. Append new files; never edit one that has shipped.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  MIGRATION_001_DELIVERIES,
  MIGRATION_002_REPORTS,
  MIGRATION_003_WATCHDOG,
  MIGRATION_004_SENT_MESSAGES,
  MIGRATION_005_ROUTE_MAILS,
  MIGRATION_006_DELIVERY_REPORT_FIELDS,
  MIGRATION_007_SENT_MESSAGES_PER_ROUTE,
  MIGRATION_008_DELIVERY_LIST_INDEXES,
  MIGRATION_009_NETBOX_SOURCES,
  MIGRATION_010_DIGEST_PERIODS,
  MIGRATION_011_ROUTE_MAIL_OWNER_GROUPS,
  MIGRATION_012_REPORTS_FAILING_INDEX,
  MIGRATION_013_WAIVERS,
  MIGRATION_014_DELIVERY_KIND,
  MIGRATION_015_REPORT_ARRIVAL,
  MIGRATION_016_REPORT_PAIR_STATES,
  MIGRATION_017_CATCH_UP,
];
