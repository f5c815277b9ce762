export { createWatchdog, type Watchdog } from './create-watchdog';
export { createWatchdogComposer } from './create-watchdog-composer';
export { buildWatchdogAlert, parseWatchdogAlert, type WatchdogAlert } from './watchdog-alert';
export { buildMissedReportsRecord, parseMissedReportsNotice, type MissedReportsNotice } from './missed-reports-notice';
