/**
 * PostgreSQL migration 011 (mirrors SQLite migration 11): the owner group of a route mail
 * addressed to NetBox's contacts (JSON: recipients, why, devices, counts), decided once with the plan
 * so a retry or another replica sends exactly the groups decided then. NULL for every other mail.
 */
export const MIGRATION_011_ROUTE_MAIL_OWNER_GROUPS = {
  version: 11,
  name: 'route_mail_owner_groups',
  sql: `
    ALTER TABLE route_mails ADD COLUMN owner_group TEXT;
  `,
} as const;
