export { createWatchdog, type Watchdog, type WatchdogOptions } from './create-watchdog';
export { createWatchdogComposer } from './create-watchdog-composer';
export { buildWatchdogAlert, parseWatchdogAlert, type WatchdogAlert } from './watchdog-alert';
export { buildWatchdogMail, formatDuration } from './build-watchdog-mail';
export {
  buildMissedReportsRecord,
  buildMissedReportsMail,
  parseMissedReportsNotice,
  formatIdRanges,
  type MissedReportsNotice,
} from './missed-reports-notice';
