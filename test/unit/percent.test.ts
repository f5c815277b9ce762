import { createHash } from 'node:crypto';
import { bandOf, formatPercent, passPercent } from '../../src/report';

describe('pass percentages as validity shows them: round(100*passed/count, 1)', () => {
  it.each([
    [0, 0, '\u2014'],
    [0, 5, '0.0%'],
    [5, 5, '100.0%'],
    [5, 8, '62.5%'],
    [2, 3, '66.7%'],
    [1, 3, '33.3%'],
    [1, 8, '12.5%'],
    [7, 9, '77.8%'],
    [1, 16, '6.2%'], // 6.25 exactly: Python rounds half to even, toFixed would say 6.3
    [3, 16, '18.8%'], // 18.75 exactly: half to even gives 18.8
    [1, 400, '0.2%'], // 0.25 exactly
    [1, 7, '14.3%'],
    [999, 1000, '99.9%'],
    [9999, 10000, '100.0%'],
  ])('%i/%i → %s', (passed, count, expected) => {
    expect(formatPercent(passed, count)).toBe(expected);
  });

  it('never yields NaN, Infinity or undefined', () => {
    for (let count = 0; count <= 40; count += 1) {
      for (let passed = 0; passed <= count; passed += 1) {
        expect(formatPercent(passed, count)).toMatch(/^(\d{1,3}\.\d%|\u2014)$/);
      }
    }
  });

  it('agrees with Python on 1,341 ratios whose exact ties need half-to-even', () => {
    // Known answer from Python 3.11, outside this code base:
    //   ','.join('%.1f' % round(100*p/c, 1) for c in (16, 40, 80, 400, 800) for p in range(c + 1))
    // hashed with SHA-256. JavaScript's toFixed differs on 6.25 → "6.3" and the like.
    const ours: string[] = [];
    for (const c of [16, 40, 80, 400, 800]) for (let p = 0; p <= c; p += 1) ours.push(formatPercent(p, c).replace('%', ''));
    expect(ours).toHaveLength(1341);
    expect(ours.slice(0, 17).join(',')).toBe('0.0,6.2,12.5,18.8,25.0,31.2,37.5,43.8,50.0,56.2,62.5,68.8,75.0,81.2,87.5,93.8,100.0');
    expect(createHash('sha256').update(ours.join(',')).digest('hex')).toBe(
      '9d11e3faf543a81f91a1692c16c7f07ca2485041703a2b30571c1ea25db39d34',
    );
  });

  it('bands like validity: ≥75 green, ≥50 yellow, ≥25 orange, else red, none without results', () => {
    expect(bandOf(passPercent(3, 4))).toBe('green');
    expect(bandOf(passPercent(74, 100))).toBe('yellow');
    expect(bandOf(passPercent(1, 2))).toBe('yellow');
    expect(bandOf(passPercent(1, 4))).toBe('orange');
    expect(bandOf(passPercent(24, 100))).toBe('red');
    expect(bandOf(passPercent(0, 0))).toBe('none');
  });
});
