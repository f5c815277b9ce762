import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { EXIT_USAGE, runCli } from '../../src/cli';
import { captureIo } from '../helpers/cli-io';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, type TestRelay } from '../helpers/relay-harness';

describe('compliance-relay backup', () => {
  let relay: TestRelay;
  let dir: string;
  beforeEach(async () => {
    dir = makeTempDir('backup-');
    relay = await startTestRelay({});
  });
  afterEach(async () => {
    await relay.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('copies the store while the relay runs, and never overwrites a file', async () => {
    for (const id of [1, 2, 3])
      expect((await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id }) }))).status).toBe(202);
    const target = path.join(dir, 'relay-backup.sqlite');
    const io = captureIo({ DATA_DIR: relay.dataDir }, dir);
    expect(await runCli(['node', 'compliance-relay', 'backup', target], io)).toBe(0);
    expect(io.out()).toContain('(3 deliveries,');
    const copy = new Database(target, { readonly: true });
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect((copy.prepare('SELECT COUNT(*) AS n FROM deliveries').get() as { n: number }).n).toBe(3);
    copy.close();
    // The relay keeps accepting while and after the copy is made.
    expect((await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 4 }) }))).status).toBe(202);

    const again = captureIo({ DATA_DIR: relay.dataDir }, dir);
    expect(await runCli(['node', 'compliance-relay', 'backup', target], again)).toBe(EXIT_USAGE);
    expect(again.err()).toContain('exists');
  });
});
