import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { runCli } from '../../src/cli';
import { SqliteStore } from '../../src/store';
import { captureIo } from '../helpers/cli-io';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';
import { startSmtpPeer } from '../helpers/smtp-peer';

const ROUTES = `
routes:
  - name: on-call
    match: { failed: { severity: HIGH, above: 0 } }
    to: oncall@example.com
    bcc: archive@example.com
    subject: "[on-call] {{defaultSubject}}"
  - name: auditors
    to: auditors@example.com
`;

describe("preview and send-test: the template author's loop", () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir('relay-preview-');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), ROUTES);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const env = () => ({
    DATA_DIR: path.join(dir, 'data'),
    ROUTES_FILE: path.join(dir, 'routes.yaml'),
    MAIL_FROM: 'Compliance <relay@example.com>',
    NETBOX_URL: 'https://netbox.example.com',
  });

  it('writes subject.txt, mail.html, mail.txt and mail.eml for a delivery file and a route, sending nothing', async () => {
    const file = path.join(dir, 'delivery.json');
    fs.writeFileSync(
      file,
      buildBody({ data: buildReportData({ id: 77, high_passed: 3, high_count: 5, total_passed: 8, total_count: 13 }) }),
    );
    const io = captureIo(env(), dir);
    expect(await runCli(['node', 'compliance-relay', 'preview', file, '--route', 'on-call', '--out', 'out'], io)).toBe(0);
    const out = path.join(dir, 'out');
    expect(fs.readFileSync(path.join(out, 'subject.txt'), 'utf8')).toBe(
      '[on-call] 61.5% passed, 2 HIGH failing \u2014 report 77 \u00b7 netbox.example.com\n',
    );
    expect(fs.readFileSync(path.join(out, 'mail.txt'), 'utf8')).toContain('https://netbox.example.com/plugins/validity/reports/77/');
    expect(fs.readFileSync(path.join(out, 'mail.html'), 'utf8')).toContain(
      'href="https://netbox.example.com/plugins/validity/reports/77/"',
    );
    const eml = await simpleParser(fs.readFileSync(path.join(out, 'mail.eml')));
    expect(eml.subject).toBe('[on-call] 61.5% passed, 2 HIGH failing \u2014 report 77 \u00b7 netbox.example.com');
    expect(eml.headers.get('x-compliance-route')).toBe('on-call');
    expect(eml.headers.has('bcc')).toBe(false);
    expect(io.out()).toContain('Envelope: from relay@example.com to oncall@example.com, archive@example.com');
    // Nothing was stored: preview never opens the outbox for a file.
    expect(fs.existsSync(path.join(dir, 'data'))).toBe(false);
  });

  it('previews the newest stored delivery (--last) and one by id; says what is wrong otherwise', async () => {
    const store = SqliteStore.open({ dataDir: path.join(dir, 'data') });
    for (const id of [5, 6]) {
      const body = buildBody({ data: buildReportData({ id, created: `2026-03-0${id}T06:00:00Z` }) });
      await store.insertDelivery({
        dedupKey: `${id}@x`,
        reportId: id,
        reportCreated: `2026-03-0${id}T06:00:00Z`,
        completedAt: `2026-03-0${id}T06:00:05Z`,
        sender: '127.0.0.1',
        body,
        receivedAt: Date.now(),
      });
    }
    await store.close();
    let io = captureIo(env(), dir);
    expect(await runCli(['node', 'compliance-relay', 'preview', '--last', '--out', 'last'], io)).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'last', 'subject.txt'), 'utf8')).toContain('\u2014 report 6 \u00b7');
    io = captureIo(env(), dir);
    expect(await runCli(['node', 'compliance-relay', 'preview', '--id', '1', '--route', 'auditors', '--out', 'one'], io)).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'one', 'subject.txt'), 'utf8')).toContain('\u2014 report 5 \u00b7');
    io = captureIo(env(), dir);
    expect(await runCli(['node', 'compliance-relay', 'preview', '--id', '99', '--out', 'x'], io)).toBe(64);
    expect(io.err()).toContain('no delivery 99');
    io = captureIo(env(), dir);
    expect(await runCli(['node', 'compliance-relay', 'preview', '--last', '--route', 'nobody', '--out', 'x'], io)).toBe(64);
    expect(io.err()).toContain('no route "nobody" (routes: on-call, auditors)');
  });

  it("send-test sends the sample report through SMTP and prints the server's answer", async () => {
    const smtp = await startSmtpPeer();
    try {
      const io = captureIo({ ...env(), SMTP_URL: smtp.url }, dir);
      expect(await runCli(['node', 'compliance-relay', 'send-test', '--to', 'me@example.com'], io)).toBe(0);
      const [mail] = await smtp.waitFor(1);
      expect(mail.envelope.to).toEqual(['me@example.com']);
      expect(mail.parsed.subject).toBe('[test] 62.5% passed, 3 failing, no HIGH \u2014 report 29 \u00b7 netbox.example.com');
      expect(io.out()).toMatch(/Server answer: 250 /);

      smtp.setBehaviour({ type: 'reject', code: 550, message: 'mailbox unavailable' });
      const refused = captureIo({ ...env(), SMTP_URL: smtp.url }, dir);
      expect(await runCli(['node', 'compliance-relay', 'send-test'], refused)).toBe(69);
      expect(refused.err()).toContain('550');
    } finally {
      await smtp.close();
    }
  });

  it('check-config stops on a broken route template set or subject, naming the file and line', async () => {
    const templates = path.join(dir, 'templates');
    fs.cpSync(path.join(__dirname, '..', '..', 'templates'), templates, { recursive: true });
    fs.cpSync(path.join(templates, 'report'), path.join(templates, 'oncall'), { recursive: true });
    fs.writeFileSync(path.join(templates, 'oncall', 'html.hbs'), '<p>fine</p>\n<p>{{#if hasFailures}}unclosed</p>\n');
    fs.writeFileSync(path.join(dir, 'routes.yaml'), 'routes:\n  - name: on-call\n    to: a@example.com\n    template: oncall\n');
    let io = captureIo({ ...env(), TEMPLATES_DIR: templates }, dir);
    expect(await runCli(['node', 'compliance-relay', 'check-config'], io)).toBe(78);
    expect(io.err()).toMatch(/oncall[/\\]html\.hbs line \d+/);

    fs.rmSync(path.join(templates, 'oncall'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'routes.yaml'), 'routes:\n  - name: on-call\n    to: a@example.com\n    template: missing\n');
    io = captureIo({ ...env(), TEMPLATES_DIR: templates }, dir);
    expect(await runCli(['node', 'compliance-relay', 'check-config'], io)).toBe(78);
    expect(io.err()).toContain('route on-call uses template set "missing"');

    fs.writeFileSync(
      path.join(dir, 'routes.yaml'),
      'routes:\n  - name: on-call\n    to: a@example.com\n    subject: "{{reportt.id}} failed"\n',
    );
    io = captureIo(env(), dir);
    expect(await runCli(['node', 'compliance-relay', 'check-config'], io)).toBe(78);
    expect(io.err()).toContain('route on-call subject');
    expect(io.err()).toContain('not defined');
  });
});
