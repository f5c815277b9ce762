import fs from 'node:fs';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { createTestCertificates, type TestCertificates } from '../helpers/test-certificates';

/**
 * Guarantee 9 (SMTP half): TLS to the SMTP server is always verified. A server whose certificate comes
 * from a private CA is refused, and accepted once SMTP_CA_FILE names that CA, for implicit TLS (smtps://)
 * and STARTTLS (smtp://) alike; the retired SMTP_TLS_REJECT_UNAUTHORIZED=false turns nothing off.
 */
describe('SMTP TLS is always verified', () => {
  let dir: string;
  let certs: TestCertificates;
  let smtp: SmtpPeer | undefined;
  let relay: TestRelay | undefined;

  beforeAll(() => {
    dir = makeTempDir('relay-tls-');
    certs = createTestCertificates(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await relay?.stop();
    await smtp?.close();
    relay = undefined;
    smtp = undefined;
  });

  const modes = [
    ['implicit TLS (smtps://)', { secure: true }],
    ['STARTTLS (smtp://)', { secure: false, disabledCommands: [] as string[] }],
  ] as const;

  async function sendOne(mode: (typeof modes)[number][1], env: Record<string, string>) {
    smtp = await startSmtpPeer({ server: { ...mode, key: certs.key, cert: certs.cert } });
    relay = await startTestRelay(
      { SMTP_URL: smtp.url, MAIL_TO: 'oncall@example.com', ...env },
      { tune: (c) => ({ ...c, retry: { ...c.retry, baseMs: 1000 } }) },
    );
    expect((await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 5 }) }))).status).toBe(202);
    return waitUntil(() => relay!.workerOutcomes[0], 15_000, 'the first send to finish');
  }

  describe.each(modes)('%s', (_name, mode) => {
    it('refuses a certificate it cannot verify, as a configuration problem, and sends nothing', async () => {
      const outcome = await sendOne(mode, {});
      expect(outcome).toMatchObject({ settled: { state: 'retrying' }, failure: { code: 'ETLS', configProblem: true } });
      expect(smtp!.received).toHaveLength(0);
      expect(relay!.logs.some((l) => l.includes('configuration problem'))).toBe(true);
    });

    it('accepts it when SMTP_CA_FILE names the CA', async () => {
      const outcome = await sendOne(mode, { SMTP_CA_FILE: certs.caFile });
      expect(outcome).toMatchObject({ settled: { state: 'sent' } });
      expect(smtp!.received).toHaveLength(1);
    });

    it('still refuses it when the retired SMTP_TLS_REJECT_UNAUTHORIZED=false is set, and warns that SMTP_CA_FILE is the way', async () => {
      const outcome = await sendOne(mode, { SMTP_TLS_REJECT_UNAUTHORIZED: 'false' });
      expect(outcome).toMatchObject({ settled: { state: 'retrying' }, failure: { code: 'ETLS' } });
      expect(smtp!.received).toHaveLength(0);
      expect(relay!.config.warnings).toEqual([
        { variable: 'SMTP_TLS_REJECT_UNAUTHORIZED', message: expect.stringContaining('always verified; give a private CA') },
      ]);
    });
  });
});
