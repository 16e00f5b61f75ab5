import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../lib/logger.js';
import { GreeterAgent, type CallAgent } from '../voice/index.js';
import { createKits } from './kits.js';
import type { ProviderKit, ProviderSlot } from './provider.js';
import { Telephony } from './service.js';
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
}

export function createTelephony(options: TelephonyOptions): Telephony {
  return new Telephony({
    settings: options.config.telephony,
    kits: options.kits ?? createKits(options.config.telephony),
    callbackBaseUrl: `${options.config.publicUrl}${options.prefix}`,
    agent: options.agent ?? new GreeterAgent(),
    saveRecording: options.saveRecording,
    log: options.log,
    db: options.db,
    statusGraceMs: options.statusGraceMs,
  });
}
