import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from './relay-harness';
import { startSmtpPeer } from './smtp-peer';
import { startNetboxDouble } from './validity-results-double';

/**
 * The NetBox of the waiver scenarios (integration on both stores, and the Chromium e2e): two tests, two
 * sites with one owner each, and routes that show each decision a waiver changes (every report, on-change,
 * owners).
 */
export const TELNET = { id: 1, name: 'telnet-disabled', severity: 'HIGH' as const };
export const NTP = { id: 2, name: 'ntp-synced', severity: 'MIDDLE' as const };
export const OWNER = { id: 1, name: 'Owner', slug: 'owner' };
export const FRA = { id: 1, name: 'Frankfurt 1', slug: 'fra1' };
export const AMS = { id: 2, name: 'Amsterdam 1', slug: 'ams1' };

export const WAIVER_ROUTES = `
routes:
  - name: team
    to: team@example.com
    continue: true
  - name: changes
    to: changes@example.com
    notify: on-change
    continue: true
  - name: owners
    to:
      netbox_contacts: { role: owner, on: [site], priority: primary }
      fallback: noc@example.com
      allowed_domains: [example.com]
`;

const NETBOX_TOKEN = '0123456789abcdef0123456789abcdef01234567';

/**
 * The peers of a waiver scenario: a temp dir (`prefix`) holding `routes` as the routes file, a real smtp-server, the
 * NetBox double (answering the relay's token only), and the relay's settings for them with `adminToken`. `close`
 * stops both peers and removes the dir; the caller starts and stops its relays.
 */
export async function startWaiverPeers(prefix: string, routes: string, adminToken: string) {
  const dir = makeTempDir(prefix);
  fs.writeFileSync(path.join(dir, 'routes.yaml'), routes);
  const smtp = await startSmtpPeer();
  const netbox = await startNetboxDouble({ authorization: `Token ${NETBOX_TOKEN}` });
  const env = {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Compliance <relay@example.com>',
    ROUTES_FILE: path.join(dir, 'routes.yaml'),
    NETBOX_URL: netbox.url,
    NETBOX_TOKEN,
    ADMIN_TOKEN: adminToken,
  };
  const close = async () => {
    await netbox.close();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { dir, smtp, netbox, env, close };
}

/** Adds a waiver through the relay's admin API (`POST /api/waivers`) and expects it taken (201). */
export async function postWaiver(relayUrl: string, adminToken: string, body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${relayUrl}/api/waivers`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
}
