export { createWatchdog, createWatchdogComposer, type Watchdog } from './create-watchdog';
export { buildWatchdogAlert, parseWatchdogAlert, type WatchdogAlert } from './watchdog-alert';
export { buildMissedReportsRecord, parseMissedReportsNotice, type MissedReportsNotice } from './missed-reports-notice';
