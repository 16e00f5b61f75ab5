/**
 * A call session takes the provider's status callbacks in any order and any number of times: each
 * moment applies once, a stale one (ringing after answered) changes nothing, and the first final
 * status decides the attempt.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { createTwilioKit } from '../../src/telephony/twilio/index.js';
import { CallSession } from '../../src/telephony/session.js';
import type { CallStatus } from '../../src/telephony/provider.js';
import { GreeterAgent } from '../../src/voice/index.js';

function session() {
  const kit = createTwilioKit({ accountSid: 'AC1', authToken: 'token', apiBaseUrl: 'http://127.0.0.1:9' });
  const s = new CallSession(
    {
      kit,
      agent: new GreeterAgent(),
      saveRecording: async () => 'unused',
      log: createLogger('silent'),
      statusGraceMs: 10,
      urls: (token) => ({ answer: `a?s=${token}`, status: `s?s=${token}`, stream: `wss://x/media/${token}`, transferStatus: 't', transferEvents: 'e', transferMarkup: 'm' }),
    },
    { leadId: 'lead-1', templateId: 'tpl', payload: {}, direction: 'outbound', ourNumber: '+12125550100', theirNumber: '+14155550123' },
  );
  s.callSid = 'CA1';
  return s;
}

const st = (phase: CallStatus['phase'], providerStatus: string, end?: CallStatus['end']): CallStatus => ({ callSid: 'CA1', phase, providerStatus, end, durationSeconds: 0 });

describe('call session', () => {
  it('applies each moment once, ignores stale and duplicate callbacks, and ends on the first final status', async () => {
    const s = session();
    assert.equal(s.status(st('ringing', 'ringing')), true);
    assert.equal(s.status(st('ringing', 'ringing')), false, 'duplicate');
    assert.equal(s.status(st('queued', 'initiated')), false, 'out of order');
    assert.equal(s.status(st('ended', 'busy', 'busy')), true);
    assert.equal(s.status(st('ended', 'completed', 'completed')), false, 'a second final status');
    assert.equal(s.status(st('answered', 'in-progress')), false, 'after the end');
    assert.deepEqual(await s.ended, { kind: 'busy', error: undefined, durationSeconds: 0 });
  });

  it('hangs up on an answering machine and makes the attempt a voicemail', async () => {
    const s = session();
    const markup = s.answer({ callSid: 'CA1', from: '+12125550100', to: '+14155550123', direction: 'outbound', answeredBy: 'machine' });
    assert.match(markup.body, /<Hangup\/>/);
    s.status(st('ended', 'completed', 'completed'));
    assert.equal((await s.ended).kind, 'voicemail');
  });

  it('connects the media stream for a person, with the stream URL carrying the token', () => {
    const s = session();
    const markup = s.answer({ callSid: 'CA1', from: '+12125550100', to: '+14155550123', direction: 'outbound', answeredBy: 'human' });
    assert.ok(markup.body.includes(`wss://x/media/${s.token}`), markup.body);
    assert.equal(s.phase, 'answered');
  });

  it('calls an answered call whose stream never connected an error, not a conversation', async () => {
    const s = session();
    s.answer({ callSid: 'CA1', from: '+12125550100', to: '+14155550123', direction: 'outbound' });
    s.status(st('ended', 'completed', 'completed'));
    const end = await s.ended;
    assert.equal(end.kind, 'error');
  });
});

describe('call session, leaving a message', () => {
  it('streams to a machine when a message is to be left, telling the agent how the greeting ended', () => {
    const s = session();
    s.context.voicemail = { action: 'leave_message', message: 'Hi' };
    const markup = s.answer({ callSid: 'CA1', from: '+12125550100', to: '+14155550123', direction: 'outbound', answeredBy: 'machine', greetingEnded: 'beep', detectionMs: 5400 });
    assert.ok(markup.body.includes(`wss://x/media/${s.token}`), markup.body);
    assert.deepEqual(s.context.machine, { greetingEnded: 'beep', detectionMs: 5400 });
  });
});
