export { createDashboardRouter } from './create-dashboard-router';
export type { DashboardOptions } from './dashboard-options';
export { buildPassChart, CHART_SERIES } from './build-pass-chart';
export { renderDashboardTemplate } from './render-page';
export { createSessionKeys, SESSION_COOKIE } from './session';
