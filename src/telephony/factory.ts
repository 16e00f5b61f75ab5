import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../lib/logger.js';
import { preloadSilero, voiceServicesFromEnv } from '../providers/index.js';
import { findTemplateById } from '../templates/index.js';
import { ConversationAgent, DEFAULT_PRICING, type Pricing, type VoiceServices } from '../voice/conversation.js';
import { GreeterAgent, type CallAgent } from '../voice/index.js';
import { createKits } from './kits.js';
import type { ProviderKit, ProviderSlot } from './provider.js';
import { Telephony, type CallSwitches } from './service.js';
import { queueFinishNotifications } from '../webhooks/index.js';
import type { SaveRecording } from './session.js';

export interface TelephonyOptions {
  config: Config;
  db: Db;
  log: Logger;
  /** The API prefix the callback routes and the media endpoint live under. */
  prefix: string;
  saveRecording: SaveRecording;
  /** The agent that talks on calls; the built-in greeter until an LLM pipeline is configured. */
  agent?: CallAgent;
  /** Provider kits; by default those whose credentials are configured. */
  kits?: ReadonlyMap<ProviderSlot, ProviderKit>;
  statusGraceMs?: number;
  /** Where the agent's settings come from (process.env by default). */
  env?: NodeJS.ProcessEnv;
  /** Feature flags read at each dial. */
  flags?: CallSwitches;
  /** The sandbox line's kits (providers without credentials, served by the in-process emulator). */
  sandboxKits?: ReadonlyMap<ProviderSlot, ProviderKit>;
}

/**
 * The agent that carries calls: `DIALER_AGENT=flow` (the default) runs each lead's template with
 * the configured AI services; `DIALER_AGENT=greeter` is the built-in demo agent that needs none.
 * Returns why calls cannot be carried when the chosen agent lacks its services.
 */
export function chooseAgent(options: Pick<TelephonyOptions, 'db' | 'env' | 'agent'>): { agent: CallAgent; notReady?: string; services?: VoiceServices } {
  if (options.agent) return { agent: options.agent };
  const env = options.env ?? process.env;
  const kind = env.DIALER_AGENT?.trim() || 'flow';
  if (kind === 'greeter') return { agent: new GreeterAgent() };
  if (kind !== 'flow') throw new Error(`DIALER_AGENT must be flow or greeter, got "${kind}"`);
  const chosen = voiceServicesFromEnv(env);
  if ('missing' in chosen) {
    const reason = `the voice agent cannot run: ${chosen.missing}`;
    // Never dialled (no driver is offered while not ready); a call that reaches it anyway is ended at once.
    const unavailable: CallAgent = {
      label: 'flow',
      converse: async (_context, io) => {
        io.hangup();
        return { outcome: 'error', metaData: { call_ended_by: 'error', errors: [reason] } };
      },
    };
    return { agent: unavailable, notReady: reason };
  }
  // Compiling the VAD model takes a moment: do it now, not inside the first call's media stream.
  void preloadSilero().catch(() => undefined);
  const agent = new ConversationAgent({
    services: chosen.services,
    pricing: pricingFromEnv(env),
    loadFlow: async (templateId) => (await findTemplateById(options.db, templateId))?.flow,
  });
  return { agent, services: chosen.services };
}

export function createTelephony(options: TelephonyOptions): Telephony {
  const { agent, notReady, services } = chooseAgent(options);
  const kits = new Map(options.kits ?? createKits(options.config.telephony));
  const sandboxKits = options.sandboxKits ?? new Map<ProviderSlot, ProviderKit>();
  for (const [slot, kit] of sandboxKits) if (!kits.has(slot)) kits.set(slot, kit);
  // Sandbox calls need no AI service: the greeter carries them until the flow agent can.
  const sandbox = sandboxKits.size > 0 ? { slots: new Set(sandboxKits.keys()), agent: notReady ? new GreeterAgent() : agent } : undefined;
  return new Telephony({
    settings: options.config.telephony,
    kits,
    sandbox,
    callbackBaseUrl: `${options.config.publicUrl}${options.prefix}`,
    agent,
    notReady,
    services,
    saveRecording: options.saveRecording,
    log: options.log,
    db: options.db,
    statusGraceMs: options.statusGraceMs,
    switches: options.flags,
    onInboundFinished: queueFinishNotifications(options.config.serviceCallbackUrl),
  });
}

/** DIALER_PRICING: JSON with any of the Pricing keys, e.g. {"telephonyPerMinute":0.0085}; the rest keep their defaults. */
export function pricingFromEnv(env: NodeJS.ProcessEnv): Pricing {
  const raw = env.DIALER_PRICING?.trim();
  if (!raw) return DEFAULT_PRICING;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('DIALER_PRICING must be a JSON object');
  }
  const pricing: Pricing = { ...DEFAULT_PRICING };
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (!(key in DEFAULT_PRICING)) throw new Error(`DIALER_PRICING: unknown price "${key}" (known: ${Object.keys(DEFAULT_PRICING).join(', ')})`);
    if (typeof value !== 'number' || !(value >= 0)) throw new Error(`DIALER_PRICING: ${key} must be a number >= 0`);
    pricing[key as keyof Pricing] = value;
  }
  return pricing;
}
