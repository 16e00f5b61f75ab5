export { BackchannelFilter, BACKCHANNELS, baseLanguage, normalise } from './backchannel.js';
export {
  expectationOf,
  RuleBasedEndOfTurn,
  SPECULATE_AT,
  waitFor,
  type EndOfTurn,
  type EndOfTurnDecision,
  type EndOfTurnWaits,
  type Expectation,
  type Prosody,
  type TurnEvidence,
} from './end-of-turn.js';
export type { BargeInKind, BargeInRecord, TurnDecisionRecord } from './records.js';
export { prosodyOf, pitchHz } from './prosody.js';
export { resolveTurnTaking, TURN_TAKING_DEFAULTS, vadOptionsFor, type TurnTakingConfig, type TurnTakingSettings } from './settings.js';
