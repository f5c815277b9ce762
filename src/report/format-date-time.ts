/** One formatter per shape and zone: building one costs more than the rest of a mail's view. */
const formatters = new Map<string, Intl.DateTimeFormat>();

const SHAPES = {
  /** "12/04/2023, 19:36:37 UTC" in parts: the mail's and the dashboard's date and time. */
  dateTime: {
    locale: 'en-GB',
    options: {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    },
  },
  /** "12 Apr": a day under a chart's axis. */
  shortDay: { locale: 'en-GB', options: { day: 'numeric', month: 'short' } },
  /** Numeric wall-clock parts, to compute a zone's offset from UTC. */
  wallClock: {
    locale: 'en-US',
    options: { hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' },
  },
} satisfies Record<string, { locale: string; options: Intl.DateTimeFormatOptions }>;

function getFormatter(shape: keyof typeof SHAPES, timeZone: string): Intl.DateTimeFormat {
  const key = `${shape} ${timeZone}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat(SHAPES[shape].locale, { ...SHAPES[shape].options, timeZone });
    formatters.set(key, formatter);
  }
  return formatter;
}

/** "12 Apr" in the configured time zone (the ISO text's first ten characters when it is not a date). */
export function formatShortDay(iso: string, timeZone: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso.slice(0, 10) : getFormatter('shortDay', timeZone).format(date);
}

/** Midnight of a calendar day (`YYYY-MM-DD`) in `timeZone`, in epoch ms (daylight saving included). */
export function startOfDayMs(value: string, timeZone: string): number {
  const asUtc = Date.parse(`${value}T00:00:00Z`);
  // The zone's offset at the guess, then again at the corrected instant (a DST change that day).
  const first = asUtc - zoneOffsetMs(asUtc, timeZone);
  return asUtc - zoneOffsetMs(first, timeZone);
}

/** How far `timeZone`'s wall clock is ahead of UTC at `at`. */
function zoneOffsetMs(at: number, timeZone: string): number {
  const p = Object.fromEntries(
    getFormatter('wallClock', timeZone)
      .formatToParts(at)
      .map((part) => [part.type, Number(part.value)]),
  );
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000;
}

/** "2023-04-12 19:36:37 UTC" in the configured time zone. */
export function formatDateTime(iso: string, timeZone: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = timeZone === 'UTC' && date.getUTCFullYear() >= 1 ? readUtcParts(date) : readZoneParts(date, timeZone);
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

type DateTimeParts = Partial<Record<Intl.DateTimeFormatPartTypes, string>>;

function readZoneParts(date: Date, timeZone: string): DateTimeParts {
  const parts: DateTimeParts = {};
  for (const part of getFormatter('dateTime', timeZone).formatToParts(date)) parts[part.type] = part.value;
  return parts;
}

/** The dateTime shape in UTC from the Date's own fields (Intl's text from year 1 on), without a formatter's ~6 MB of ICU data. */
function readUtcParts(date: Date): DateTimeParts {
  const two = (n: number) => String(n).padStart(2, '0');
  return {
    year: String(date.getUTCFullYear()),
    month: two(date.getUTCMonth() + 1),
    day: two(date.getUTCDate()),
    hour: two(date.getUTCHours()),
    minute: two(date.getUTCMinutes()),
    second: two(date.getUTCSeconds()),
    timeZoneName: 'UTC',
  };
}
