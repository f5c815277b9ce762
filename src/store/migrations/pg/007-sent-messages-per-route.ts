/**
 * PostgreSQL migration 007 (mirrors SQLite migration 7): one kept copy per (delivery,
 * route), so a report mailed to two routes keeps both mails. A copy kept before names its route only
 * when exactly one route of its delivery was sent (then it is that route's mail, with that
 * Message-ID); otherwise its route is '' ("not recorded"). Adding a column with a constant default is
 * a catalogue change; the new primary key builds its index once over the (small) table.
 */
export const MIGRATION_007_SENT_MESSAGES_PER_ROUTE = {
  version: 7,
  name: 'sent_messages_per_route',
  sql: `
    ALTER TABLE sent_messages ADD COLUMN route TEXT NOT NULL DEFAULT '', ADD COLUMN message_id TEXT;
    UPDATE sent_messages s SET route = sole.route, message_id = sole.message_id
      FROM (
        SELECT delivery_id, MAX(route) AS route, MAX(message_id) AS message_id FROM route_mails
        WHERE state = 'sent' GROUP BY delivery_id HAVING COUNT(*) = 1
      ) sole
      WHERE sole.delivery_id = s.delivery_id;
    ALTER TABLE sent_messages DROP CONSTRAINT sent_messages_pkey, ADD PRIMARY KEY (delivery_id, route);
  `,
} as const;
