import fs from 'node:fs';
import { startChildRelay, type ChildRelay } from '../helpers/child-relay';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, waitUntil } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const DELIVERIES = 1_000;
const POOL_SIZE = 5;
const SECRET = 'crash-test-webhook-secret';

/**
 * Guarantee 1: a relay killed with SIGKILL in the middle of a burst loses nothing it acknowledged,
 * and mails at most SMTP_POOL_SIZE duplicates (the sends that were in flight at the kill).
 */
/**
 * Posts like a NetBox requeue: a keep-alive socket the server closed just as it was reused ("other
 * side closed") is tried again, up to 3 times, unless the relay was killed meanwhile.
 */
async function postAgain(url: string, body: Buffer, killed: () => boolean = () => false): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return (await postWebhook(url, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status;
    } catch (error) {
      if (attempt >= 3 || killed()) throw error;
    }
  }
}

describe('crash safety: SIGKILL in the middle of a burst of 1,000 deliveries', () => {
  let dir: string;
  let smtp: SmtpPeer;
  let child: ChildRelay | undefined;

  beforeAll(async () => {
    dir = makeTempDir('relay-crash-');
    // A one-line template set: this test is about delivery, and the shipped templates' CSS inlining
    // would make 1,000 renders the bulk of its time.
    fs.mkdirSync(`${dir}/templates/report`, { recursive: true });
    fs.writeFileSync(`${dir}/templates/report/subject.hbs`, '{{defaultSubject}}');
    fs.writeFileSync(`${dir}/templates/report/html.hbs`, '<p>{{defaultSubject}}</p>');
    fs.writeFileSync(`${dir}/templates/report/text.hbs`, '{{defaultSubject}}');
    // The server takes 20 ms to say "250 OK" after it has the mail: at the kill, sends are in flight.
    smtp = await startSmtpPeer({ behaviour: { type: 'accept', delayMs: 20 } });
  });
  afterAll(async () => {
    await child?.kill('SIGKILL');
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('mails every acknowledged delivery after a restart, with duplicates bounded by the sends in flight', async () => {
    const env = {
      DATA_DIR: `${dir}/data`,
      SMTP_URL: smtp.url,
      SMTP_POOL_SIZE: String(POOL_SIZE),
      MAIL_TO: 'oncall@example.com',
      WEBHOOK_SECRET: SECRET,
      TEMPLATES_DIR: `${dir}/templates`,
    };
    const bodies = Array.from({ length: DELIVERIES }, (_, i) =>
      buildBody({
        data: buildReportData({
          id: 10_000 + i,
          created: `2026-03-06T15:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.000000Z`,
        }),
      }),
    );
    const acknowledged = new Set<number>();
    const unanswered = new Set<number>();

    child = await startChildRelay(env, { cwd: dir });
    const first = child;
    let killed = false;
    let next = 0;
    const poster = async () => {
      while (next < DELIVERIES) {
        const i = next++;
        if (killed) {
          unanswered.add(i);
          continue;
        }
        try {
          const status = await postAgain(`${first.url}/webhook`, bodies[i], () => killed);
          // 200: a retried request whose first try had been stored (its answer lost with the socket).
          if (status === 202 || status === 200) acknowledged.add(i);
          else throw new Error(`unexpected answer ${status}`);
        } catch (error) {
          if (!killed) throw error;
          unanswered.add(i);
        }
        // Kill in the middle: past 400 acknowledgements, while a mail is at the server awaiting its answer (a send in flight).
        if (!killed && acknowledged.size >= 400 && smtp.received.length >= 1 && smtp.attempts > smtp.received.length) {
          killed = true;
          first.proc.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, poster));
    // Should the machine be too slow for a mail to leave during the burst, kill at the next send in flight.
    if (!killed) {
      await waitUntil(() => smtp.attempts > smtp.received.length || undefined, 60_000, 'a send in flight');
      first.proc.kill('SIGKILL');
    }
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(acknowledged.size).toBeGreaterThanOrEqual(400);

    // Restart on the same data dir; what NetBox never got an answer for, it sends again (a requeue).
    child = await startChildRelay(env, { cwd: dir });
    const second = child;
    const again = [...unanswered];
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = again.pop(); i !== undefined; i = again.pop()) {
          statuses.push(await postAgain(`${second.url}/webhook`, bodies[i]));
        }
      }),
    );
    // Stored before the kill but not answered: a duplicate (200); never stored: queued (202).
    expect(statuses.filter((s) => s !== 200 && s !== 202)).toEqual([]);
    const reportIdOf = (m: SmtpPeer['received'][number]) => Number(m.parsed.headers.get('x-compliance-report-id'));
    const distinct = () => new Set(smtp.received.map(reportIdOf));
    await waitUntil(() => distinct().size === DELIVERIES || undefined, 200_000, `all ${DELIVERIES} reports mailed`);
    await waitUntil(
      () => child!.output.some((l) => l.includes('"resuming deliveries')) || undefined,
      5_000,
      'the restart to resume the interrupted sends',
    );

    const counts = new Map<number, number>();
    for (const m of smtp.received) counts.set(reportIdOf(m), (counts.get(reportIdOf(m)) ?? 0) + 1);
    for (const i of acknowledged) expect(counts.get(10_000 + i)).toBeGreaterThanOrEqual(1);
    const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
    // The README's at-least-once bound: duplicates ≤ sends in flight at the kill ≤ SMTP_POOL_SIZE.
    expect(duplicates).toBeLessThanOrEqual(POOL_SIZE);
    // A duplicate is the same mail again: the same Message-ID, so clients can fold it.
    const ids = new Map<number, Set<string>>();
    for (const m of smtp.received) ids.set(reportIdOf(m), (ids.get(reportIdOf(m)) ?? new Set()).add(String(m.parsed.messageId)));
    for (const set of ids.values()) expect(set.size).toBe(1);
    process.stdout.write(
      `crash-safety: ${acknowledged.size} acknowledged before SIGKILL, ${unanswered.size} re-sent after restart, ${duplicates} duplicate mails (bound ${POOL_SIZE})\n`,
    );
  }, 300_000);
});
