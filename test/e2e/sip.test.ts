/**
 * Calls through a SIP trunk against baresip, a SIP and RTP stack no one here wrote: it answers
 * (answermode=auto), plays speech from the local voice as the callee, records what it hears, and
 * hangs up when its speech is over. Dialer's SIP driver carries the call with the built-in greeter
 * (the flow agent, on local LLM, transcription and voice servers, for the warm transfer that briefs
 * the human: baresip answers as the human too, on a second account, and presses their key).
 * What baresip cannot be made to do on demand (a network that loses and reorders its RTP, a
 * transfer's NOTIFYs) is played by a lean callee of the tests' own (helpers/sip-callee.ts).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { connect, createServer, type Socket } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { rms } from '../../src/lib/audio.js';
import { createLogger } from '../../src/lib/logger.js';
import { SipDriver, type SipDriverDeps, type SipTrunk } from '../../src/telephony/sip/driver.js';
import { GREETER_DEFAULTS, GreeterAgent } from '../../src/voice/greeter.js';
import type { CallAgent } from '../../src/voice/index.js';
import type { CallResult } from '../../src/telephony/index.js';
import { decodeWav } from '../../src/lib/audio.js';
import { startBaresip, type Baresip } from '../helpers/baresip.js';
import { startKamailio, type Kamailio } from '../helpers/kamailio.js';
import { startSipCallee, type FrameFate } from '../helpers/sip-callee.js';
import { startSipRefuser } from '../helpers/sip-refuser.js';
import { speechClip, RATE_HZ } from '../helpers/clips.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { LocalTTS, OpenAICompatibleLLM, OpenAITranscriptionSTT, SileroVAD } from '../../src/providers/index.js';
import { ConversationAgent } from '../../src/voice/conversation.js';
import { DECISION_PROMPT } from '../../src/voice/warm-transfer.js';
import type { TTS } from '../../src/voice/services.js';

const CALLEE = '+14155550199';
const US = '+14155550100';

/** Seconds of 20 ms windows louder than speech's floor. */
function loudSeconds(pcm: Int16Array): number {
  let loud = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm.subarray(i, i + 160)) > 300) loud++;
  return loud * 0.02;
}

function driverFor(baresip: Pick<Baresip, 'address'>, agent: CallAgent, recordings: Map<string, Buffer>, trunk: Partial<SipTrunk> = {}, bind: { tlsCa?: string; tlsIdentity?: { cert: string; key: string } } = {}, more: Partial<SipDriverDeps> = {}): SipDriver {
  return new SipDriver({
    agent,
    saveRecording: async (callId, wav) => {
      recordings.set(callId, wav);
      return `memory:${callId}`;
    },
    log: createLogger('silent'),
    trunkFor: async () => ({ id: 'trunk-1', address: baresip.address, transport: 'udp', codecs: ['PCMU', 'PCMA'], ...trunk }),
    bind: { host: '127.0.0.1', port: 0, ...bind },
    ringTimeoutSeconds: 10,
    maxCallSeconds: 60,
    ...more,
  });
}

function dial(driver: SipDriver, to = CALLEE, payload: Record<string, unknown> = {}): Promise<CallResult> {
  const ids: string[] = [];
  return driver
    .dial({ leadId: 'lead-1', attempt: 1, to, from: US, templateId: 'template-1', payload, executionMode: 'sip', onCallId: (id) => ids.push(id), signal: new AbortController().signal })
    .then((r) => {
      assert.deepEqual(ids, r.callId ? [r.callId] : []);
      return r;
    });
}

describe('SIP trunk calls against baresip', () => {
  let calleeSpeech: Int16Array;
  before(async () => {
    calleeSpeech = (await speechClip('callee', 'Hello? Yes, this is Sam speaking. I am fine, thank you very much for calling me today.')).pcm;
  });

  describe('a whole call with the greeter, ended by the callee', () => {
    let baresip: Baresip;
    let driver: SipDriver;
    const recordings = new Map<string, Buffer>();
    before(async () => {
      baresip = await startBaresip({ user: CALLEE, speech: calleeSpeech, sampleRateHz: RATE_HZ });
      driver = driverFor(baresip, new GreeterAgent(), recordings);
    });
    after(async () => {
      await driver?.close();
      await baresip?.close();
    });

    it('answers, carries both voices, records, and ends with the callee\'s BYE as `customer`', async () => {
      const result = await dial(driver);
      assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
      if (result.end.kind !== 'completed') return;
      assert.ok(result.callId);
      const meta = result.end.metaData!;
      assert.equal(meta.call_ended_by, 'customer');
      assert.equal(meta.sip_ended_by, 'customer');
      assert.deepEqual((meta.sip_statuses as number[]).at(-1), 200);
      assert.ok(Array.isArray(meta.transcription) && meta.transcription.length > 0, 'the greeter wrote a transcript');
      // Dialer's recording holds the callee's speech (baresip hangs up when its WAV is over).
      assert.equal(result.end.recordingUrl, `memory:${result.callId}`);
      const recording = decodeWav(recordings.get(result.callId!)!).pcm;
      assert.ok(loudSeconds(recording) >= 2, `the recording has ${loudSeconds(recording)} s of sound`);
      // baresip heard the agent: its decoder's dump holds speech, not only silence.
      await baresip.waitFor(/terminated/);
      const { heard } = await baresip.recordings();
      assert.ok(heard, `baresip recorded nothing:\n${baresip.output()}`);
      assert.ok(loudSeconds(heard) >= 1, `baresip heard ${loudSeconds(heard)} s of the agent`);
      assert.ok(rms(heard) > 200, `baresip's recording is near silent (rms ${rms(heard)})`);
    });
  });

  describe('over TCP and TLS: baresip listens on both, with a self-signed certificate for 127.0.0.1', () => {
    let baresip: Baresip;
    let certificate: string;
    let key: string;
    before(async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'dialer-sip-tls-'));
      try {
        await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')]);
        certificate = await readFile(path.join(dir, 'cert.pem'), 'utf8');
        key = await readFile(path.join(dir, 'key.pem'), 'utf8');
        // Two seconds of silence first: the greeter's greeting is heard before the callee speaks over it.
        const short = (await speechClip('callee-short', 'Yes, this is Sam speaking. Thank you.')).pcm;
        const speech = new Int16Array(2 * RATE_HZ + short.length);
        speech.set(short, 2 * RATE_HZ);
        baresip = await startBaresip({ user: CALLEE, speech, sampleRateHz: RATE_HZ, tlsIdentity: key + certificate });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
    after(async () => {
      await baresip?.close();
    });

    /** A whole call with the greeter through `trunk`; what baresip heard of the agent in it. */
    async function wholeCall(trunk: Partial<SipTrunk>): Promise<void> {
      const recordings = new Map<string, Buffer>();
      // Dialer trusts baresip's certificate, and shows the same one when baresip connects back (its BYE over TLS).
      const driver = driverFor(baresip, new GreeterAgent(), recordings, trunk, { tlsCa: certificate, tlsIdentity: { cert: certificate, key } });
      try {
        const before = new Set((await baresip.heardByCall()).keys());
        const ended = (baresip.output().match(/terminated/g) ?? []).length;
        const result = await dial(driver);
        assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
        if (result.end.kind !== 'completed') return;
        const meta = result.end.metaData!;
        // baresip's BYE came back over the same transport and ended the call.
        assert.equal(meta.sip_ended_by, 'customer', baresip.output());
        assert.ok(loudSeconds(decodeWav(recordings.get(result.callId!)!).pcm) >= 1, 'Dialer recorded the callee');
        await baresip.waitFor(new RegExp(Array(ended + 1).fill('terminated').join('[\\s\\S]*')));
        const heard = [...(await baresip.heardByCall()).entries()].filter(([file]) => !before.has(file));
        assert.equal(heard.length, 1, `baresip recorded ${heard.length} new calls:\n${baresip.output()}`);
        const pcm = heard[0]![1];
        assert.ok(loudSeconds(pcm) >= 1, `baresip heard ${loudSeconds(pcm)} s of the agent (${pcm.length} samples, rms ${rms(pcm)}) ${JSON.stringify(meta)}\n${baresip.output()}`);
        assert.ok(rms(pcm) > 200, `baresip's recording is near silent (rms ${rms(pcm)})`);
      } finally {
        await driver.close();
      }
    }

    it('a whole call with the greeter over TCP', async () => {
      // The trunk's address is a TCP relay to baresip: a call that reaches it went over TCP (no UDP gets through).
      let relayed = 0;
      const sockets: Socket[] = [];
      const relay = createServer((inbound) => {
        relayed++;
        const outbound = connect(Number(baresip.address.split(':')[1]), '127.0.0.1');
        sockets.push(inbound, outbound);
        inbound.pipe(outbound).pipe(inbound);
        inbound.on('error', () => outbound.destroy());
        outbound.on('error', () => inbound.destroy());
      });
      await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = relay.address() as { port: number };
        await wholeCall({ transport: 'tcp', address: `127.0.0.1:${port}` });
        assert.equal(relayed, 1, 'one connection carried the call');
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => relay.close(() => resolve()));
      }
    });

    it('a whole call with the greeter over TLS, the certificate verified against the CA given', async () => {
      await wholeCall({ transport: 'tls', address: baresip.tlsAddress! });
    });

    it('a TLS trunk whose certificate is not trusted fails the attempt, saying so', async () => {
      const driver = driverFor(baresip, new GreeterAgent(), new Map(), { transport: 'tls', address: baresip.tlsAddress! });
      try {
        const result = await dial(driver);
        assert.equal(result.end.kind, 'error', JSON.stringify(result.end));
        assert.match(String(result.end.error), /TLS to 127\.0\.0\.1:\d+ failed: self[- ]signed certificate/);
        assert.equal(result.end.metaData?.sip_status, 503);
      } finally {
        await driver.close();
      }
    });
  });

  describe('Dialer hangs up and presses keys', () => {
    let baresip: Baresip;
    let driver: SipDriver;
    const recordings = new Map<string, Buffer>();
    before(async () => {
      // A long callee: the call ends by Dialer's BYE, not by baresip's.
      const long = new Int16Array(calleeSpeech.length * 4);
      for (let i = 0; i < 4; i++) long.set(calleeSpeech, i * calleeSpeech.length);
      baresip = await startBaresip({ user: CALLEE, speech: long, sampleRateHz: RATE_HZ });
      const keys: CallAgent = {
        label: 'keys',
        async converse(_context, io) {
          await io.sendDigits!('5#');
          io.hangup();
          return { metaData: { call_ended_by: 'agent' } };
        },
      };
      driver = driverFor(baresip, keys, recordings, { codecs: ['PCMA'] });
    });
    after(async () => {
      await driver?.close();
      await baresip?.close();
    });

    it('sends RFC 4733 keys that baresip receives, and its BYE is acknowledged', async () => {
      const result = await dial(driver);
      assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
      if (result.end.kind !== 'completed') return;
      const meta = result.end.metaData!;
      assert.equal(meta.sip_ended_by, 'agent');
      assert.equal(meta.codec, 'PCMA');
      assert.deepEqual((meta.dtmf_sent as Array<{ digits: string }>).map((k) => k.digits), ['5#']);
      // baresip took Dialer's BYE (it reports the session closed by its peer).
      await baresip.waitFor(/session closed|terminated/);
      await baresip.waitFor(/received event: '5'/);
      await baresip.waitFor(/received event: '#'/);
    });
  });

  describe('digest authentication against kamailio, the carrier\'s proxy in front of baresip', () => {
    let baresip: Baresip;
    let kamailio: Kamailio;
    // The agent hangs up at once: the call's setup is what is tested.
    const brief: CallAgent = {
      label: 'brief',
      async converse(_context, io) {
        io.hangup();
        return { metaData: {} };
      },
    };
    before(async () => {
      baresip = await startBaresip({ user: CALLEE, speech: calleeSpeech, sampleRateHz: RATE_HZ });
      kamailio = await startKamailio({ realm: 'carrier.test', username: 'dialer', password: 's3cret', next: baresip.address });
    });
    after(async () => {
      await kamailio?.close();
      await baresip?.close();
    });

    it('answers the 407 challenge and the call goes through the proxy to baresip', async () => {
      const driver = driverFor(kamailio, brief, new Map(), { username: 'dialer', password: 's3cret' });
      try {
        const result = await dial(driver);
        assert.equal(result.end.kind, 'completed', `${JSON.stringify(result.end)}\n${kamailio.output()}`);
        const statuses = result.end.metaData!.sip_statuses as number[];
        assert.equal(statuses[0], 407);
        assert.equal(statuses.at(-1), 200);
        await baresip.waitFor(/session closed|terminated/);
      } finally {
        await driver.close();
      }
    });

    it('a wrong password fails the attempt as a carrier error with the 403 kept', async () => {
      const driver = driverFor(kamailio, brief, new Map(), { username: 'dialer', password: 'wrong' });
      try {
        const result = await dial(driver);
        assert.equal(result.end.kind, 'error', JSON.stringify(result.end));
        assert.match(result.end.kind === 'error' ? result.end.error : '', /carrier error: SIP 403 Forbidden/);
        assert.equal(result.end.metaData?.sip_status, 403);
        assert.deepEqual(result.end.metaData?.sip_statuses, [407, 403]);
      } finally {
        await driver.close();
      }
    });
  });

  it('a trunk answering 503, without a failover trunk, is a carrier error with the status in metaData', async () => {
    const down = await startSipRefuser(503, 'Service Unavailable');
    const driver = new SipDriver({
      agent: new GreeterAgent(),
      saveRecording: async (callId) => `memory:${callId}`,
      log: createLogger('silent'),
      trunkFor: async () => ({ id: 'down', address: down.address, transport: 'udp', codecs: ['PCMU'] }),
      failover: async () => undefined,
      bind: { host: '127.0.0.1', port: 0 },
      ringTimeoutSeconds: 10,
      maxCallSeconds: 60,
    });
    try {
      const result = await dial(driver);
      assert.equal(result.end.kind, 'error', JSON.stringify(result.end));
      assert.match(result.end.kind === 'error' ? result.end.error : '', /SIP 503 Service Unavailable/);
      assert.equal(result.end.metaData?.sip_status, 503);
      assert.equal(result.end.metaData?.sip_trunk_id, 'down');
      assert.equal(down.invites.size, 1);
    } finally {
      await driver.close();
      await down.close();
    }
  });

  it('a trunk that never answers the INVITE is left for its failover trunk; both refusals are kept', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const down = await startSipRefuser(502, 'Bad Gateway');
    const driver = new SipDriver({
      agent: new GreeterAgent(),
      saveRecording: async (callId) => `memory:${callId}`,
      log: createLogger('silent'),
      trunkFor: async () => ({ id: 'silent', address: `127.0.0.1:${silent.address().port}`, transport: 'udp', codecs: ['PCMU'] }),
      failover: async (_request, from) => (from === 'silent' ? { id: 'down', address: down.address, transport: 'udp', codecs: ['PCMU'] } : undefined),
      bind: { host: '127.0.0.1', port: 0 },
      ringTimeoutSeconds: 10,
      maxCallSeconds: 60,
      noResponseSeconds: 0.3,
    });
    try {
      const ids: string[] = [];
      const result = await driver.dial({ leadId: 'lead-2', attempt: 1, to: CALLEE, from: US, templateId: 't', payload: {}, executionMode: 'sip', onCallId: (id) => ids.push(id), signal: new AbortController().signal });
      assert.equal(result.end.kind, 'error', JSON.stringify(result.end));
      const meta = result.end.metaData!;
      assert.equal(meta.sip_status, 502);
      assert.equal(meta.sip_trunk_id, 'down');
      const [first] = meta.sip_failover as Array<{ trunk_id: string; status: number; reason: string }>;
      assert.equal(first!.trunk_id, 'silent');
      assert.equal(first!.status, 408);
      assert.match(first!.reason, /did not answer the INVITE/);
      assert.deepEqual(ids, [(meta.sip_failover as Array<{ sip_call_id: string }>)[0]!.sip_call_id, result.callId]);
    } finally {
      await driver.close();
      await down.close();
      silent.close();
    }
  });

  it('an unknown user is a failed attempt with its SIP status', async () => {
    const baresip = await startBaresip({ user: CALLEE, speech: calleeSpeech, sampleRateHz: RATE_HZ });
    const driver = driverFor(baresip, new GreeterAgent(), new Map());
    try {
      const result = await dial(driver, '+14155550111');
      assert.notEqual(result.end.kind, 'completed');
      assert.match(('error' in result.end ? result.end.error : undefined) ?? '', /^SIP 4\d\d /);
    } finally {
      await driver.close();
      await baresip.close();
    }
  });
});

describe('warm transfer by bridging: baresip answers as both the customer and the human', () => {
  const HUMAN = '+14155550177';
  let baresip: Baresip;
  before(async () => {
    const speech = (await speechClip('callee', 'Hello? Yes, this is Sam speaking. I am fine, thank you very much for calling me today.')).pcm;
    baresip = await startBaresip({ user: CALLEE, others: [HUMAN], speech, sampleRateHz: RATE_HZ });
  });
  after(async () => {
    await baresip?.close();
  });

  /**
   * An agent that hands the call over after a second and stays out of the way, or hangs up when the
   * transfer fails. (baresip names its recordings by the second a call started: the human's must not
   * share the customer's.)
   */
  const transferring = (to: string): CallAgent => ({
    label: 'transferring',
    async converse(_context, io) {
      await new Promise((r) => setTimeout(r, 1100));
      const error = await io.transfer(to).then(() => undefined, (err: Error) => err.message);
      if (error) io.hangup();
      return { outcome: 'conversation_completed', metaData: error ? { transfer_error: error } : {} };
    },
  });

  it('calls the human on the trunk and joins the two calls: each hears the other, the recording goes on, the lead is TRANSFERRED', async () => {
    const recordings = new Map<string, Buffer>();
    const driver = driverFor(baresip, transferring(HUMAN), recordings, { transferMethod: 'bridge' });
    try {
      const result = await dial(driver);
      assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
      if (result.end.kind !== 'completed') return;
      assert.equal(result.end.outcome, 'TRANSFERRED');
      const meta = result.end.metaData!;
      assert.equal(meta.transferred_to, HUMAN);
      const events = meta.transfer_events as Array<Record<string, string>>;
      assert.deepEqual(events.slice(0, 2).map((e) => e.event), ['dial', 'answered']);
      assert.equal(events[0]!.to, HUMAN);
      // baresip's WAV ends each call: whichever ends first ends both.
      assert.ok(meta.sip_ended_by === 'customer' || meta.sip_ended_by === 'transfer', String(meta.sip_ended_by));
      await baresip.waitFor(/terminated[\s\S]*terminated/);
      // Both of baresip's calls heard speech, and the agent said nothing: it came from the other call.
      const heard = [...(await baresip.heardByCall()).entries()];
      assert.equal(heard.length, 2, heard.map(([f]) => f).join(', '));
      for (const [file, pcm] of heard) assert.ok(loudSeconds(pcm) >= 1, `${file}: ${loudSeconds(pcm)} s of the other side's speech`);
      // Dialer's recording holds the call after the transfer: the customer and the human.
      assert.ok(loudSeconds(decodeWav(recordings.get(result.callId!)!).pcm) >= 2);
    } finally {
      await driver.close();
    }
  });

  it('a human who cannot be reached fails the transfer with the status; the agent keeps the call', async () => {
    const driver = driverFor(baresip, transferring('+14155550111'), new Map(), { transferMethod: 'bridge' });
    try {
      const result = await dial(driver);
      assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
      if (result.end.kind !== 'completed') return;
      const meta = result.end.metaData!;
      assert.match(String(meta.transfer_error), /the transfer to \+14155550111 failed: SIP 4\d\d/);
      assert.equal(meta.transferred_to, undefined);
      assert.equal(meta.sip_ended_by, 'agent');
      const events = meta.transfer_events as Array<Record<string, string>>;
      assert.deepEqual(events.map((e) => e.event), ['dial', 'failed']);
      assert.match(events[1]!.status!, /^4\d\d$/);
    } finally {
      await driver.close();
    }
  });
});

describe('SIP calls over a network that loses and reorders RTP, and cold transfer', () => {
  let calleeSpeech: Int16Array;
  before(async () => {
    calleeSpeech = (await speechClip('callee-short', 'Yes, this is Sam speaking. Thank you.')).pcm;
  });

  it('5 % of the callee\'s frames lost and 12 % reordered: the recording holds its speech frame for frame, the transcript is whole', async () => {
    // Frame i: every twentieth lost; every tenth overtaken by the next; every fiftieth two frames late.
    const channel = (i: number): FrameFate => (i % 20 === 7 ? { drop: true } : i % 10 === 3 ? { later: 1 } : i % 50 === 25 ? { later: 2 } : 'send');
    const callee = await startSipCallee({ speech: calleeSpeech, channel });
    const recordings = new Map<string, Buffer>();
    const driver = driverFor(callee, new GreeterAgent(), recordings, { codecs: ['PCMU'] });
    try {
      const greeting = 'Hello, is this Sam?';
      const result = await dial(driver, CALLEE, { greeting });
      assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
      if (result.end.kind !== 'completed') return;
      const meta = result.end.metaData!;
      // The greeter heard one whole turn: nothing cut its greeting, it said goodbye and hung up.
      assert.equal(result.end.outcome, 'conversation_completed');
      assert.deepEqual((meta.transcription as Array<{ role: string; content: string }>).map((t) => t.content), [greeting, GREETER_DEFAULTS.farewell]);
      assert.equal(meta.barge_ins, 0);
      assert.equal(meta.sip_ended_by, 'agent');
      // Every lost frame concealed, none dropped as late: the reordered ones were put back in place.
      const rtp = meta.rtp as { frames_concealed: number; frames_late: number };
      assert.equal(rtp.frames_late, 0);
      assert.ok(Math.abs(rtp.frames_concealed - callee.dropped) <= 3, `${rtp.frames_concealed} concealed, ${callee.dropped} dropped`);
      // The callee's speech in Dialer's recording, frame for frame at one offset (no frame missing
      // or doubled): all but the lost frames are the very samples it sent.
      const recording = decodeWav(recordings.get(result.callId!)!).pcm;
      const sent = callee.sentPcm();
      const speechFrames: number[] = [];
      for (let k = 0; (k + 1) * 160 <= sent.length; k++) if (rms(sent.subarray(k * 160, (k + 1) * 160)) > 300) speechFrames.push(k);
      assert.ok(speechFrames.length > 50, `the callee spoke ${speechFrames.length} frames`);
      const same = (k: number, shift: number) => {
        const at = (k - shift) * 160;
        if (at < 0 || at + 160 > recording.length) return false;
        for (let j = 0; j < 160; j++) if (recording[at + j] !== sent[k * 160 + j]) return false;
        return true;
      };
      // The first frames may come before the stream listens: the recording starts a few frames in.
      const misses = Array.from({ length: 10 }, (_, shift) => speechFrames.filter((k) => !same(k, shift))).sort((a, b) => a.length - b.length)[0]!;
      // Only the lost frames differ (concealed); at most two others, where the agent's own voice
      // may touch the callee's in the mixed recording (the greeting's tail, the farewell's start).
      const lost = (k: number) => {
        const fate = channel(k);
        return fate !== 'send' && 'drop' in fate;
      };
      const others = misses.filter((k) => !lost(k));
      assert.ok(others.length <= 2 && misses.length / speechFrames.length <= 0.08, `speech frames not as sent: ${misses.join(', ')} (lost: every 20th from 7)`);
      // The callee heard the agent.
      assert.ok(loudSeconds(callee.heardPcm()) >= 1);
    } finally {
      await driver.close();
      await callee.close();
    }
  });

  it('the agent\'s transfer sends REFER; the callee\'s NOTIFYs are kept, Dialer hangs up after the 200, and the lead is TRANSFERRED', async () => {
    const callee = await startSipCallee({ speech: calleeSpeech });
    const transferring: CallAgent = {
      label: 'transferring',
      async converse(_context, io) {
        await io.transfer('+14155550123');
        await new Promise<void>((resolve) => (io.signal.aborted ? resolve() : io.signal.addEventListener('abort', () => resolve(), { once: true })));
        return { outcome: 'conversation_completed', metaData: { call_ended_by: 'transfer' } };
      },
    };
    const driver = driverFor(callee, transferring, new Map());
    try {
      const result = await dial(driver);
      assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
      if (result.end.kind !== 'completed') return;
      assert.equal(result.end.outcome, 'TRANSFERRED');
      const meta = result.end.metaData!;
      assert.equal(meta.transferred_to, '+14155550123');
      assert.equal(meta.sip_ended_by, 'transfer');
      assert.deepEqual(callee.refers, [`sip:+14155550123@127.0.0.1`]);
      const events = meta.transfer_events as Array<Record<string, string>>;
      assert.deepEqual(events.map((e) => e.event), ['refer', 'accepted', 'notify', 'notify']);
      assert.deepEqual(events.filter((e) => e.event === 'notify').map((e) => e.status), ['100', '200']);
      await callee.ended;
      assert.equal(callee.byes, 1);
    } finally {
      await driver.close();
      await callee.close();
    }
  });

  it('a REFER the far side refuses fails the transfer with its status; the agent keeps the call', async () => {
    const callee = await startSipCallee({ speech: calleeSpeech, referResponse: '403 Forbidden' });
    const transferring: CallAgent = {
      label: 'transferring',
      async converse(_context, io) {
        const error = await io.transfer('+14155550123').then(() => undefined, (err: Error) => err.message);
        io.hangup();
        return { outcome: 'conversation_completed', metaData: { transfer_error: error } };
      },
    };
    const driver = driverFor(callee, transferring, new Map());
    try {
      const result = await dial(driver);
      assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
      if (result.end.kind !== 'completed') return;
      assert.equal(result.end.outcome, 'conversation_completed');
      const meta = result.end.metaData!;
      assert.match(String(meta.transfer_error), /SIP 403 Forbidden/);
      assert.equal(meta.transferred_to, undefined);
      assert.equal(meta.sip_ended_by, 'agent');
      assert.deepEqual((meta.transfer_events as Array<Record<string, string>>).map((e) => e.event), ['refer', 'refused']);
    } finally {
      await driver.close();
      await callee.close();
    }
  });
});

describe('warm transfer with a briefing over the trunk: the flow agent consults the human on baresip', () => {
  const CUSTOMER = '+14155550166';
  const HUMAN = '+14155550177';
  /** A human whose phone rings until they reject the call, or Dialer gives up. */
  const RINGING = '+14155550188';
  /** A human who answers by voice: "Yes", six seconds into their call. */
  const SPEAKING = '+14155550199';
  let baresip: Baresip;
  let ai: OpenAIServer;
  /** Resolves each time the briefing (with its question) has been synthesised for the human's leg. */
  let briefed: () => Promise<void>;
  let agent: ConversationAgent;

  before(async () => {
    // Fifteen seconds of quiet, then words: the customer says something once the human is put
    // through (baresip hangs up when its WAV is over). Both accounts play it: the human is silent
    // until then, and decides by key.
    const words = (await speechClip('customer-late', 'Hello? This is Sam. Thank you.')).pcm;
    const speech = new Int16Array(15 * RATE_HZ + words.length);
    speech.set(words, 15 * RATE_HZ);
    // The human says yes six seconds in, while the briefing may still play (they may decide then),
    // so they are put through well before the customer speaks.
    const yes = (await speechClip('human-yes', 'Yes, put them through.')).pcm;
    const human = new Int16Array(22 * RATE_HZ);
    human.set(yes, 6 * RATE_HZ);
    baresip = await startBaresip({ user: CUSTOMER, others: [HUMAN, SPEAKING], ringing: [RINGING], voices: { [SPEAKING]: human }, speech, sampleRateHz: RATE_HZ });
    ai = await startOpenAIServer();
    // The LLM answers after a second: baresip names its recordings by the second a call started, and the human's must not share the customer's.
    ai.pace.firstTokenMs = 1100;
    const voice = new LocalTTS();
    let onBriefing: (() => void) | undefined;
    briefed = () => new Promise<void>((resolve) => (onBriefing = resolve));
    // The local voice, and word of when the briefing was synthesised (the human presses their key while it plays).
    const tts: TTS = {
      label: voice.label,
      sampleRateHz: voice.sampleRateHz,
      async *synthesize(text, options) {
        yield* voice.synthesize(text, options);
        if (text.includes(DECISION_PROMPT)) onBriefing?.();
      },
    };
    const flow = {
      initial_node: 'help',
      turn_taking: { mode: 'vad' },
      nodes: [
        {
          node_name: 'help',
          task_messages: [{ role: 'system', content: 'Put {customer_name} through to a person.' }],
          functions: [{ name: 'talk_to_human', description: 'Put the caller through to a person', transfer_to_number: '{human_number}', warm_transfer: { briefing: '{customer_name} asks about order {order_id}.', hold_message: 'One moment.', declined_message: 'My colleague is busy, so I will help you myself.', no_answer_message: 'We will call you back. Goodbye.' } }],
        },
      ],
    };
    agent = new ConversationAgent({
      services: { llm: new OpenAICompatibleLLM({ baseUrl: ai.url, model: 'gpt-4o-mini', timeoutMs: 5000 }), stt: new OpenAITranscriptionSTT({ baseUrl: ai.url, model: 'whisper-1', timeoutMs: 5000 }), tts, vad: new SileroVAD() },
      loadTemplate: async () => ({ flow: flow as never }),
    });
  });
  after(async () => {
    await baresip?.close();
    await ai?.close();
  });

  interface WarmCall {
    /** The key the human presses while the briefing plays (none: the human decides by what they say, or does not). */
    key?: string;
    /** The customer hangs up once the agent said this to them. */
    untilSaid?: string;
    human?: string;
    /** How long the human's phone (and the customer's) may ring. */
    ringTimeoutSeconds?: number;
    /** The human's phone rejects the call while it rings (486 Busy Here). */
    rejectWhileRinging?: boolean;
  }

  /** A lead's call whose agent transfers warm at once. */
  async function warmCall({ key, untilSaid, human = HUMAN, ringTimeoutSeconds, rejectWhileRinging }: WarmCall = {}): Promise<{ result: CallResult; recordings: Map<string, Buffer> }> {
    ai.chat.length = 0;
    ai.chat.push({ tools: [{ name: 'talk_to_human', arguments: {} }] }, { text: 'How can I help you?' }, { text: 'Goodbye.' });
    ai.transcripts.length = 0;
    ai.transcriptionRequests.length = 0;
    if (human === SPEAKING) ai.transcripts.push('Yes, put them through.');
    const recordings = new Map<string, Buffer>();
    let said: (() => void) | undefined;
    const saidIt = new Promise<void>((resolve) => (said = resolve));
    const driver = driverFor(baresip, agent, recordings, {}, {}, { liveTranscript: () => (line) => void (line.content === untilSaid && said?.()), ...(ringTimeoutSeconds ? { ringTimeoutSeconds } : {}) });
    const from = baresip.output().length;
    try {
      const briefing = briefed();
      const calling = dial(driver, CUSTOMER, { customer_name: 'Sam', order_id: 'A-42', human_number: human });
      if (rejectWhileRinging) {
        await baresip.waitFor(new RegExp(`sip:\\${human}@127\\.0\\.0\\.1: Incoming call`), 30_000, from);
        await baresip.command('uafind', `sip:${human}@127.0.0.1`);
        await baresip.command('hangup');
      }
      // (A call that ends without a briefing fails on its record below.)
      if (key && (await Promise.race([briefing.then(() => true), calling.then(() => false)]))) {
        // The human's phone presses the key: their account is made baresip's current one first.
        await baresip.command('uafind', `sip:${human}@127.0.0.1`);
        await baresip.command('sndcode', key);
      }
      // The customer hangs up once the agent said `untilSaid` to them.
      if (untilSaid && (await Promise.race([saidIt.then(() => true), calling.then(() => false)]))) {
        await baresip.command('uafind', `sip:${CUSTOMER}@127.0.0.1`);
        await baresip.command('hangup');
      }
      return { result: await calling, recordings };
    } finally {
      await driver.close();
    }
  }

  /** What baresip heard on each call, oldest first: the customer's, then the human's. */
  async function heard(): Promise<Int16Array[]> {
    const calls = [...(await baresip.heardByCall()).entries()].sort(([a], [b]) => a.localeCompare(b));
    return calls.map(([, pcm]) => pcm);
  }

  it('the human hears the briefing, presses 1, and only then hears the customer; the lead is TRANSFERRED', async () => {
    const { result, recordings } = await warmCall({ key: '1' });
    assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
    if (result.end.kind !== 'completed') return;
    const meta = result.end.metaData as any;
    assert.equal(result.end.outcome, 'TRANSFERRED', JSON.stringify(meta));
    assert.equal(meta.transferred_to, HUMAN);
    const [warm] = meta.warm_transfers;
    assert.deepEqual({ to: warm.to, briefing: warm.briefing, source: warm.briefing_source, decision: warm.decision, via: warm.via }, { to: HUMAN, briefing: 'Sam asks about order A-42.', source: 'template', decision: 'accepted', via: 'key' });
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'answered', 'briefed', 'accepted', 'bridged']);
    // The human's leg went through the trunk, and the call's SIP record says so.
    assert.deepEqual(meta.transfer_events.map((e: any) => e.event).slice(0, 3), ['dial', 'answered', 'bridged']);
    assert.ok(meta.dtmf_received === undefined, 'the human\'s key is theirs, not the customer\'s');
    await baresip.waitFor(/terminated[\s\S]*terminated/);
    const [customer, human] = await heard();
    assert.ok(customer && human, baresip.output());
    // The human's call: the briefing until the bridge, the customer's words after it.
    const at = (event: string) => Date.parse(warm.events.find((e: any) => e.event === event).at);
    const bridgedAt = Math.round(((at('bridged') - at('answered')) / 1000) * RATE_HZ);
    assert.ok(loudSeconds(human.subarray(0, bridgedAt)) >= 2, `the human heard ${loudSeconds(human.subarray(0, bridgedAt))} s of briefing`);
    assert.ok(loudSeconds(human.subarray(bridgedAt)) >= 0.5, `the human heard ${loudSeconds(human.subarray(bridgedAt))} s of the customer`);
    // Dialer's recording holds the hold message, and the customer and the human after it.
    assert.ok(loudSeconds(decodeWav(recordings.get(result.callId!)!).pcm) >= 1);
  });

  it('a human who says "yes" is put through: their words are the decision, and then they hear the customer', async () => {
    const from = baresip.output().length;
    const { result } = await warmCall({ human: SPEAKING });
    assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
    if (result.end.kind !== 'completed') return;
    const meta = result.end.metaData as any;
    assert.equal(result.end.outcome, 'TRANSFERRED', JSON.stringify(meta));
    assert.equal(meta.transferred_to, SPEAKING);
    const [warm] = meta.warm_transfers;
    assert.deepEqual({ decision: warm.decision, via: warm.via, heard: warm.heard }, { decision: 'accepted', via: 'voice', heard: 'Yes, put them through.' });
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'answered', 'briefed', 'accepted', 'bridged']);
    // The human's words went to the speech-to-text: a segment about as long as their "yes".
    assert.ok(ai.transcriptionRequests.length === 1 && ai.transcriptionRequests[0]!.seconds < 5, JSON.stringify(ai.transcriptionRequests));
    await baresip.waitFor(/terminated[\s\S]*terminated/, 15_000, from);
    // (baresip keeps every call's sound: the human's, begun after the customer's, is the latest.)
    const human = (await heard()).at(-1);
    assert.ok(human, baresip.output());
    const at = (event: string) => Date.parse(warm.events.find((e: any) => e.event === event).at);
    const bridgedAt = Math.round(((at('bridged') - at('answered')) / 1000) * RATE_HZ);
    assert.ok(loudSeconds(human.subarray(0, bridgedAt)) >= 2, `the human heard ${loudSeconds(human.subarray(0, bridgedAt))} s of briefing`);
    assert.ok(loudSeconds(human.subarray(bridgedAt)) >= 0.5, `the human heard ${loudSeconds(human.subarray(bridgedAt))} s of the customer`);
  });

  it('a human who presses 2 is hung up; the customer is told and the agent keeps the call', async () => {
    const { result } = await warmCall({ key: '2', untilSaid: 'My colleague is busy, so I will help you myself.' });
    assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
    if (result.end.kind !== 'completed') return;
    const meta = result.end.metaData as any;
    assert.notEqual(result.end.outcome, 'TRANSFERRED', JSON.stringify(meta));
    assert.equal(meta.transferred_to, undefined);
    const [warm] = meta.warm_transfers;
    assert.deepEqual({ decision: warm.decision, via: warm.via }, { decision: 'declined', via: 'key' });
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'answered', 'briefed', 'declined']);
    assert.deepEqual(meta.transfer_events.map((e: any) => e.event), ['dial', 'answered', 'ended']);
    assert.equal(meta.transfer_events[2].by, 'agent');
    // The customer heard the agent again: the declined message is in the transcript after the hold message.
    const said = meta.transcription.filter((t: any) => t.role === 'assistant').map((t: any) => t.content);
    assert.equal(said[0], 'One moment.');
    assert.ok(said.indexOf('My colleague is busy, so I will help you myself.') > 0, JSON.stringify(meta));
  });

  it('a human the trunk cannot reach: the customer is told, the agent ends the call, and the callback is scheduled', async () => {
    const { result } = await warmCall({ human: '+14155550111' });
    assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
    if (result.end.kind !== 'completed') return;
    const meta = result.end.metaData as any;
    const [warm] = meta.warm_transfers;
    assert.equal(warm.decision, 'failed', JSON.stringify(warm));
    assert.match(warm.error, /SIP 404/);
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'failed']);
    assert.deepEqual(meta.transfer_events.map((e: any) => [e.event, e.status]), [['dial', undefined], ['failed', '404']]);
    assert.ok(meta.callback?.at && meta.callback.at === warm.callback_at, JSON.stringify(meta.callback));
    assert.ok(meta.transcription.some((t: any) => t.content === 'We will call you back. Goodbye.'));
    assert.equal(meta.sip_ended_by, 'agent');
  });
  it('a human whose phone rings on: Dialer cancels at the ring timeout, the customer is told, and the callback is scheduled', async () => {
    const { result } = await warmCall({ human: RINGING, ringTimeoutSeconds: 5 });
    assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
    if (result.end.kind !== 'completed') return;
    const meta = result.end.metaData as any;
    const [warm] = meta.warm_transfers;
    assert.equal(warm.decision, 'no_answer', JSON.stringify(warm));
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'no_answer']);
    // The human's leg was cancelled: its INVITE ended 487 Request Terminated.
    assert.deepEqual(meta.transfer_events.map((e: any) => [e.event, e.status]), [['dial', undefined], ['failed', '487']]);
    assert.match(meta.transfer_events[1].reason, /no answer/);
    assert.ok(meta.callback?.at && meta.callback.at === warm.callback_at, JSON.stringify(meta.callback));
    assert.ok(meta.transcription.some((t: any) => t.content === 'We will call you back. Goodbye.'));
    assert.equal(meta.sip_ended_by, 'agent');
  });

  it('a human who rejects the ringing call (486 Busy Here): the customer is told, and the callback is scheduled', async () => {
    const { result } = await warmCall({ human: RINGING, rejectWhileRinging: true });
    assert.equal(result.end.kind, 'completed', JSON.stringify(result.end));
    if (result.end.kind !== 'completed') return;
    const meta = result.end.metaData as any;
    const [warm] = meta.warm_transfers;
    assert.equal(warm.decision, 'busy', JSON.stringify(warm));
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'busy']);
    assert.deepEqual(meta.transfer_events.map((e: any) => [e.event, e.status]), [['dial', undefined], ['failed', '486']]);
    assert.ok(meta.callback?.at && meta.callback.at === warm.callback_at, JSON.stringify(meta.callback));
    assert.ok(meta.transcription.some((t: any) => t.content === 'We will call you back. Goodbye.'));
  });
});
