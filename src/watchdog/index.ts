export { createWatchdog, createWatchdogComposer, type Watchdog } from './create-watchdog';
export { buildWatchdogAlert } from './watchdog-alert';
export { buildMissedReportsRecord } from './missed-reports-notice';
