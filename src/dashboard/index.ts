export { createDashboardRouter } from './create-dashboard-router';
export { buildPassChart, CHART_SERIES } from './build-pass-chart';
export { createSessionKeys, renderDashboardTemplate, SESSION_COOKIE, type DashboardOptions } from './render-page';
