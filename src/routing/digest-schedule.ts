import { Cron } from 'croner';

/** The ticks of a digest route's cron schedule, in its time zone. */
export type DigestSchedule = ReturnType<typeof parseDigestSchedule>;

/** Reads a cron expression with croner (paused: it only computes dates); throws on a bad expression or time zone. */
export function parseDigestSchedule(schedule: string, timezone: string) {
  const cron = new Cron(schedule, { timezone, paused: true });
  // A pattern that never fires (30 February) is a mistake in a routes file, not a silent route.
  if (cron.nextRun(new Date(0)) === null) throw new Error('the schedule never fires');
  return {
    /** The latest tick at or before `ms` (epoch ms), or null when the schedule has none. */
    tickAtOrBefore(ms: number): number | null {
      // previousRuns() looks strictly before its reference: one millisecond later includes `ms` itself.
      const [previous] = cron.previousRuns(1, new Date(ms + 1));
      return previous ? previous.getTime() : null;
    },
    /** The first tick strictly after `ms`, or null when the schedule has none. */
    tickAfter(ms: number): number | null {
      return cron.nextRun(new Date(ms))?.getTime() ?? null;
    },
  };
}
