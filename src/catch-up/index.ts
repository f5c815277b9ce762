export { createCatchUp, CATCH_UP_BUDGET_MS, type CatchUp, type CatchUpOptions, type CatchUpOutcome } from './create-catch-up';
export { createSourceCatchUps, type SourceCatchUps } from './create-source-catch-ups';
export { REPORTS_PATH } from './list-newer-reports';
