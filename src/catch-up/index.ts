export { createSourceCatchUps, type CatchUpOutcome } from './create-catch-up';
