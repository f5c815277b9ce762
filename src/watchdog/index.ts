export { createWatchdog, type Watchdog, type WatchdogOptions } from './create-watchdog';
export { withWatchdogMail } from './with-watchdog-mail';
export { buildWatchdogAlert, parseWatchdogAlert, type WatchdogAlert } from './watchdog-alert';
export { buildWatchdogMail, formatDuration } from './build-watchdog-mail';
