export { type CatchUpOutcome } from './create-catch-up';
export { createSourceCatchUps, type SourceCatchUps } from './create-source-catch-ups';
