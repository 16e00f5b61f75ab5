/**
 * The sandbox line: for each provider without credentials, Dialer runs the provider emulator in
 * its own process and dials it as that provider, with credentials made up for the occasion. The
 * emulator's simulated customer answers, listens, replies and hangs up; no phone rings and nothing
 * is charged. Real credentials for a provider take it off the line. SIP is always on the line: the
 * sandbox trunk's far side (sip-far.ts) answers in the process with the same simulated customer.
 * DIALER_SANDBOX=false turns the line off.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { ConfigError } from '../config/env.js';
import { ANY_NUMBER, readScenarios, startEmulator, type CalleeScript, type Emulator } from '../emulator/index.js';
import type { Logger } from '../lib/logger.js';
import type { TelephonySettings } from '../config/telephony.js';
import { createKits, SIP_PROVIDER, SLOT_PATHS, type ProviderKit, type ProviderSlot } from '../telephony/index.js';
import { startSandboxSipFar, type SandboxSipFar } from './sip-far.js';

/** Every sandbox lead calls this number; the simulated customer answers whatever number is dialled. */
export const SANDBOX_CUSTOMER_NUMBER = '+15005550100';
/** The caller IDs of the sandbox line, one per provider and one for its SIP trunk (fictional 555-01xx numbers). */
export const SANDBOX_NUMBERS: Readonly<Record<ProviderSlot | typeof SIP_PROVIDER, string>> = {
  PROVIDER_A: '+15555550101',
  PROVIDER_B: '+15555550102',
  PROVIDER_C: '+15555550103',
  SIP: '+15555550104',
};

/** The simulated customer: waits for the agent to speak, answers, waits for its reply, says goodbye. */
export const SANDBOX_CALLEE: CalleeScript = {
  answer: 'answer',
  ringMs: 600,
  maxSeconds: 90,
  steps: [
    { waitForAudio: 20_000 },
    { say: 'Hi! Yes, this is Sam. I am doing well, thank you for calling.' },
    { waitForAudio: 20_000 },
    { say: 'Great, goodbye!' },
    { hangup: true },
  ],
};

export interface SandboxLine {
  /** The providers the line serves, and the kits that dial them on the emulator. */
  kits: ReadonlyMap<ProviderSlot, ProviderKit>;
  /** The provider emulator, when some provider has no credentials. */
  emulator: Emulator | undefined;
  /** The sandbox trunk's far side in this process (its address is where sandbox trunks' calls go). */
  sip: SandboxSipFar;
  close(): Promise<void>;
}

const secret = () => randomBytes(16).toString('hex');

/** Starts the line: the emulator for the providers `config` has no credentials for, and the SIP far side; undefined when the sandbox is off. */
export async function startSandboxLine(config: Config, log: Logger): Promise<SandboxLine | undefined> {
  if (!config.sandbox) return undefined;
  const t = config.telephony;
  const missing = (Object.keys(SLOT_PATHS) as ProviderSlot[]).filter((slot) => (slot === 'PROVIDER_A' ? !t.twilio : slot === 'PROVIDER_B' ? !t.exotel : !t.plivo));
  let scenarios: Map<string, CalleeScript> | undefined;
  try {
    scenarios = config.sandboxScenarios ? readScenarios(config.sandboxScenarios) : undefined;
  } catch (err) {
    throw new ConfigError(`DIALER_SANDBOX_SCENARIOS ${(err as Error).message}`);
  }
  const defaultScript = scenarios?.get(ANY_NUMBER) ?? SANDBOX_CALLEE;
  const sip = await startSandboxSipFar({
    scriptFor: (number) => scenarios?.get(number) ?? defaultScript,
    log: (msg) => log.debug({ sandbox: true, provider: SIP_PROVIDER }, msg),
  });
  const emulator = missing.length > 0 ? await startProviderEmulator(config, log, defaultScript, scenarios).catch(async (err: unknown) => {
    await sip.close();
    throw err;
  }) : undefined;
  const kits = emulator?.kits ?? new Map<ProviderSlot, ProviderKit>();
  for (const slot of [...kits.keys()]) if (!missing.includes(slot)) kits.delete(slot);
  log.info({ providers: [...kits.keys(), SIP_PROVIDER], emulator: emulator?.emulator.url, sip: sip.address }, 'sandbox line: calls on these providers, and through sandbox trunks, reach a simulated customer (no phone rings)');
  return {
    kits,
    emulator: emulator?.emulator,
    sip,
    close: async () => {
      await sip.close();
      await emulator?.emulator.close();
    },
  };
}

/** The provider emulator with made-up credentials, and the kits that dial it. */
async function startProviderEmulator(config: Config, log: Logger, defaultScript: CalleeScript, scenarios: Map<string, CalleeScript> | undefined): Promise<{ emulator: Emulator; kits: Map<ProviderSlot, ProviderKit> }> {
  const twilio = { accountSid: `AC${randomBytes(16).toString('hex')}`, authToken: secret() };
  const plivo = { authId: `MA${randomBytes(9).toString('hex').toUpperCase()}`, authToken: secret() };
  const exotel = { accountSid: `sandbox${randomBytes(4).toString('hex')}`, apiKey: secret(), apiToken: secret() };
  const emulator = await startEmulator({
    dialerUrl: config.publicUrl,
    twilio,
    plivo,
    exotel,
    defaultScript,
    // A line that lives as long as the server: no call's frames and audio kept in memory (the
    // recording Dialer makes is the record), and only the last 200 ended calls.
    recordMedia: false,
    keepEndedCalls: 200,
    log: (msg) => log.debug({ sandbox: true }, msg),
  });
  for (const [number, script] of scenarios ?? []) if (number !== ANY_NUMBER) emulator.script(number, script);
  const settings: TelephonySettings = {
    ...config.telephony,
    twilio: { ...twilio, apiBaseUrl: emulator.url },
    plivo: { ...plivo, apiBaseUrl: emulator.url },
    exotel: { ...exotel, apiBaseUrl: emulator.url, flowUrl: emulator.exotelFlowUrl },
  };
  return { emulator, kits: createKits(settings) };
}
