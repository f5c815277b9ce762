import fs from 'node:fs';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import { FAILURE_CATALOGUE } from '../../src/notify';
import type { Clock } from '../../src/shared';
import { SqliteStore, type DeliveryStateChange } from '../../src/store';
import { textOf } from '../helpers/html';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { makeReportDelivery } from '../contract/store-contract';
import { startDashboard } from '../helpers/dashboard';
import type { HttpListener } from '../helpers/http-listener';

const ADMIN_TOKEN = 'dashboard-admin-token-0123456789';
const NOW = Date.parse('2026-03-06T16:00:00Z');

/** One stored failure per row: how the worker settles a delivery that failed with `code`. */
const FAILURES: Record<string, DeliveryStateChange> = {
  graphRejected: { state: 'dead', code: 'GRAPH_REJECTED', error: 'Graph 400 ErrorInvalidRecipients: At least one recipient is not valid.' },
  expiredCertificate: { state: 'retrying', code: 'ETLS', error: 'certificate has expired', nextAttemptAt: NOW + 60_000 },
  oauth2Refused: {
    state: 'retrying',
    code: 'OAUTH2_REFUSED',
    error: 'invalid_client: AADSTS7000222 the client secret keys are expired',
    nextAttemptAt: NOW + 60_000,
  },
  unknown: { state: 'retrying', code: 'UNKNOWN', error: 'something new (code EWHATEVER)', nextAttemptAt: NOW + 60_000 },
};

/**
 * What the dashboard tells an on-call about a failed delivery comes from the one failure catalogue:
 * whether it is tried again is the catalogue's `retryable` (and held-for-operator), never a sentence of
 * its own. A real SQLite store, settled as the worker settles, read through the real dashboard over HTTP.
 */
describe('the dashboard describes each stored failure as the catalogue does', () => {
  let dataDir: string;
  let store: SqliteStore;
  let dashboard: HttpListener;
  let url: string;
  const ids = new Map<string, number>();

  beforeAll(async () => {
    dataDir = makeTempDir('failure-words-');
    store = SqliteStore.open({ dataDir });
    let n = 0;
    for (const name of Object.keys(FAILURES)) {
      n += 1;
      const body = buildBody({ data: buildReportData({ id: n, created: new Date(NOW - n * 60_000).toISOString() }) });
      ids.set(name, (await store.insertDelivery(makeReportDelivery(body, NOW - n * 60_000))).id);
    }
    await store.claimDue({ now: NOW - 1000, limit: ids.size, owner: 'test', leaseMs: 60_000 });
    await store.settleBatch({
      now: NOW - 1000,
      deliveries: [...ids].map(([name, id]) => ({ id, routes: [], sent: [], state: FAILURES[name] })),
      reports: [],
    });
    const clock: Clock = { now: () => NOW };
    dashboard = await startDashboard({
      adminToken: ADMIN_TOKEN,
      store,
      clock,
    });
    url = dashboard.url;
  });

  afterAll(async () => {
    await dashboard.close();
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The words in a delivery's row of the list. */
  async function wordsFor(name: string): Promise<string> {
    const cookie = `${SESSION_COOKIE}=${createSessionKeys(ADMIN_TOKEN).issue(NOW).cookie}`;
    const page = await (await fetch(`${url}/ui`, { headers: { cookie } })).text();
    const row = new RegExp(`<tr data-delivery="${ids.get(name)}"[\\s\\S]*?</tr>`).exec(page)?.[0];
    expect(row).toBeDefined();
    return textOf(/<span class="error-words">([\s\S]*?)<\/span>/.exec(row!)?.[1] ?? '');
  }

  it('a message Microsoft Graph refused is dead: the dashboard says it is not tried again', async () => {
    const words = await wordsFor('graphRejected');
    expect(FAILURE_CATALOGUE.GRAPH_REJECTED.retryable).toBe(false);
    expect(words).toContain('Microsoft Graph refused this message');
    expect(words).toContain('It is not tried again.');
    expect(words).not.toMatch(/is tried again/);
  });

  it('an expired certificate (ETLS) names the fix and holds the queue for it', async () => {
    const words = await wordsFor('expiredCertificate');
    expect(words).toContain('is not trusted (certificate has expired)');
    expect(words).toContain('SMTP_CA_FILE');
    expect(words).toContain('The queue waits for an operator to fix it; nothing is given up.');
  });

  it('a refused OAuth2 secret holds the queue for an operator: nothing is given up', async () => {
    expect(await wordsFor('oauth2Refused')).toContain(
      "refused the app's credentials (client secret, tenant, grant). The queue waits for an operator to fix it; nothing is given up.",
    );
  });

  it('a failure the relay does not know is tried again', async () => {
    expect(await wordsFor('unknown')).toBe('The send failed for a reason the relay does not know. It is tried again.');
  });
});

describe('the failure catalogue', () => {
  it('holds every operator problem for the fix: none is given up, a server-wide one holds the whole queue', () => {
    const held = Object.keys(FAILURE_CATALOGUE).filter((code) => FAILURE_CATALOGUE[code].configProblem);
    expect(held.sort()).toEqual(
      ['EAUTH', 'ENOAUTH', 'ETLS', 'GRAPH_ACCESS_DENIED', 'OAUTH2_REFUSED', 'SMTP_TLS_REQUIRED', 'TEMPLATE'].sort(),
    );
    for (const code of held) expect(FAILURE_CATALOGUE[code]).toMatchObject({ retryable: true });
    for (const code of held.filter((c) => c !== 'TEMPLATE')) expect(FAILURE_CATALOGUE[code]).toMatchObject({ scope: 'server' });
  });

  it('is final for one message only where sending that same mail again can never pass', () => {
    const final = Object.keys(FAILURE_CATALOGUE).filter((code) => !FAILURE_CATALOGUE[code].retryable);
    // The server refused this message for good (RFC 5321 5xx, an address, its content), the report cannot be
    // built or read, or the operator removed its route.
    expect(final.sort()).toEqual(['EENVELOPE', 'EMESSAGE', 'EUNREADABLE', 'GRAPH_REJECTED', 'RENDER', 'ROUTE_REMOVED', 'SMTP_5XX'].sort());
    for (const code of final) expect(FAILURE_CATALOGUE[code].scope).toBe('message');
  });
});
