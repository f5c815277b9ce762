import { formatDateTime } from '../../src/report';
import { isTimeZone } from '../../src/routing';

/** The mail's date and time as Intl writes it: what formatDateTime gave for every zone before UTC was read without Intl. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatWithIntl(date: Date, timeZone: string): string {
  const formatter =
    formatters.get(timeZone) ??
    new Intl.DateTimeFormat('en-GB', {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
      timeZone,
    });
  formatters.set(timeZone, formatter);
  const parts = Object.fromEntries(formatter.formatToParts(date).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

describe('formatDateTime in UTC (read from the Date, not through Intl)', () => {
  it('writes what Intl writes: midnights, leap days, month and year ends, years 1 to 275760, and 5,000 instants in between', () => {
    const instants = [
      '2023-04-12T19:36:37.739Z',
      '2024-02-29T00:00:00Z',
      '2023-12-31T23:59:59.999Z',
      '2024-01-01T00:00:00Z',
      '1970-01-01T00:00:00Z',
      '1582-10-04T12:00:00Z', // the Julian calendar's last day: Intl is proleptic Gregorian, as Date is
      '0001-01-01T00:00:00Z',
      '0999-06-15T08:05:09Z',
      '9999-12-31T23:59:59Z',
      '+010000-01-01T00:00:00Z',
      '+275760-09-13T00:00:00Z',
    ].map((iso) => new Date(iso));
    // A fixed sequence (no Math.random): the same instants on every run, from year 1000 to 3000.
    let seed = 49;
    const from = Date.UTC(1000, 0, 1);
    const span = Date.UTC(3000, 0, 1) - from;
    for (let i = 0; i < 5_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      instants.push(new Date(from + Math.floor((seed / 2 ** 31) * span)));
    }
    const differing = instants.filter((date) => formatDateTime(date.toISOString(), 'UTC') !== formatWithIntl(date, 'UTC'));
    expect(differing.map((date) => date.toISOString())).toEqual([]);
    expect(formatDateTime('2023-04-12T19:36:37.739906+00:00', 'UTC')).toBe('2023-04-12 19:36:37 UTC');
  });

  it('leaves years before 1 to Intl (it counts them by era), and other zones too', () => {
    const beforeYearOne = new Date('-001277-12-11T14:10:35Z');
    expect(formatDateTime(beforeYearOne.toISOString(), 'UTC')).toBe(formatWithIntl(beforeYearOne, 'UTC'));
    expect(formatDateTime('2023-04-12T19:36:37Z', 'Europe/Berlin')).toBe('2023-04-12 21:36:37 CEST');
    expect(formatDateTime('not a date', 'UTC')).toBe('not a date');
  });

  it('isTimeZone knows UTC without Intl and asks Intl for every other name', () => {
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Etc/UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
