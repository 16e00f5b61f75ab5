/** The twelve query types, one function (and one SQL statement) each. */
import type { AnalyticsRow, QueryType } from '../schemas.js';
import { conversionFunnel, providerBreakdown, retryAnalysis } from './breakdowns.js';
import type { AnalyticsQuery } from './context.js';
import { avgDurationOverTime, callsOverTime, hourlyHeatmap } from './series.js';
import { outcomeDistribution, sentimentDistribution, statusDistribution, topOutcomes } from './shares.js';
import { callCount, callDuration } from './totals.js';

export type { AnalyticsQuery, QueryContext, RowsPage } from './context.js';

export const QUERIES: Readonly<Record<QueryType, AnalyticsQuery<AnalyticsRow>>> = {
  call_count: callCount,
  call_duration: callDuration,
  outcome_distribution: outcomeDistribution,
  sentiment_distribution: sentimentDistribution,
  status_distribution: statusDistribution,
  calls_over_time: callsOverTime,
  avg_duration_over_time: avgDurationOverTime,
  top_outcomes: topOutcomes,
  retry_analysis: retryAnalysis,
  provider_breakdown: providerBreakdown,
  hourly_heatmap: hourlyHeatmap,
  conversion_funnel: conversionFunnel,
};
