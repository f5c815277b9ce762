export { createSourceCatchUps } from './create-catch-up';
