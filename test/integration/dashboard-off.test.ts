import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

describe('the dashboard without ADMIN_TOKEN', () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await startTestRelay({});
  });
  afterEach(() => relay.stop());

  it('answers 404 and says how to turn it on, with the same strict headers', async () => {
    for (const path of ['/ui', '/ui/login', '/ui/deliveries/1']) {
      const res = await fetch(`${relay.url}${path}`, { redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('Set <code>ADMIN_TOKEN</code>');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
    const login = await fetch(`${relay.url}/ui/login`, { method: 'POST', body: new URLSearchParams({ token: 'x'.repeat(20) }) });
    expect(login.status).toBe(404);
  });
});
