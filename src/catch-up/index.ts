export { createSourceCatchUps, type CatchUpOutcome, type SourceCatchUps } from './create-catch-up';
