export { createWatchdog, type Watchdog } from './create-watchdog';
