import { buildPassChart, createSessionKeys, renderDashboardTemplate } from '../../src/dashboard';

describe('dashboard building blocks', () => {
  it('escapes every value a page shows, in text and in attributes', () => {
    const error = '<img src=x onerror=alert(1)> & "quoted"';
    const escaped = '&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt; &amp; &quot;quoted&quot;';
    expect(renderDashboardTemplate('not-expired', { text: error })).toContain(`<p class="flash bad" role="alert">${escaped}</p>`);
    expect(renderDashboardTemplate('state-badge', error)).toBe(`<span class="state state-${escaped}">${escaped}</span>`);
  });

  it('leaves a gap, not a 0 %, where a severity had no results', () => {
    const ratio = (passed: number, count: number) => ({ passed, count });
    const report = (id: number, low: [number, number]) => ({
      reportId: id,
      createdMs: id * 3_600_000,
      deliveryId: id,
      when: `day ${id}`,
      day: `${id} Mar`,
      counts: { HIGH: ratio(1, 2), MIDDLE: ratio(2, 2), LOW: ratio(...low), overall: ratio(3, 4) },
    });
    const svg = renderDashboardTemplate(
      'pass-chart',
      buildPassChart([report(1, [1, 1]), report(2, [0, 0]), report(3, [1, 2]), report(4, [2, 2])]),
    );
    const low = /<g class="series" data-series="LOW">(.*?)<\/g>/.exec(svg)![1];
    expect(low.match(/<circle/g)).toHaveLength(3);
    // Report 1 stands alone (no line to a missing point); reports 3 and 4 are joined.
    expect(low.match(/<polyline/g)).toHaveLength(1);
    expect(low).toContain('LOW in report 3 (day 3): 1/2 passed, 50.0%');
    expect(renderDashboardTemplate('pass-chart', buildPassChart([]))).toContain('No reports stored yet');
  });

  it('signs sessions with a key derived from the token: another token, a changed expiry or an old session is refused', () => {
    const keys = createSessionKeys('admin-token-aaaaaaaaaaaaaaaa');
    const { cookie, session } = keys.issue(1_000);
    expect(cookie).not.toContain('admin-token');
    expect(keys.verify(cookie, 2_000)).toEqual(session);
    expect(keys.verify(cookie, session.expiresAt)).toBeUndefined();
    expect(createSessionKeys('admin-token-bbbbbbbbbbbbbbbb').verify(cookie, 2_000)).toBeUndefined();
    const [v, id, , mac] = cookie.split('.');
    expect(keys.verify(`${v}.${id}.${session.expiresAt + 1_000_000}.${mac}`, 2_000)).toBeUndefined();
    expect(keys.verifyCsrf(session, keys.csrfToken(session))).toBe(true);
    expect(keys.verifyCsrf(session, keys.csrfToken({ ...session, id: 'x'.repeat(24) }))).toBe(false);
    expect(keys.verifyAdminToken('admin-token-aaaaaaaaaaaaaaaa')).toBe(true);
    expect(keys.verifyAdminToken('admin-token-aaaaaaaaaaaaaaab')).toBe(false);
  });
});
