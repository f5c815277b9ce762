export { createWatchdog, createWatchdogComposer, type Watchdog } from './create-watchdog';
