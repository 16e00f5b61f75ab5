/**
 * The customer's sentiment, 0 (negative) to 0.5 (neutral) to 1 (positive): VADER, a lexicon and
 * rule model that runs locally (no service), averaged over what the customer said.
 */
import vader from 'vader-sentiment';

interface Vader {
  SentimentIntensityAnalyzer: { polarity_scores(text: string): { compound: number } };
}

export function sentimentScore(utterances: string[]): number | undefined {
  const said = utterances.map((u) => u.trim()).filter(Boolean);
  if (said.length === 0) return undefined;
  let sum = 0;
  for (const text of said) sum += (vader as Vader).SentimentIntensityAnalyzer.polarity_scores(text).compound;
  const compound = sum / said.length; // -1 .. 1
  return Math.round(((compound + 1) / 2) * 1000) / 1000;
}
