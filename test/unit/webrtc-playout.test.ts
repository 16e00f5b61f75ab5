/**
 * WebRTC pieces without a peer: the playout that paces agent audio into libwebrtc in 10 ms frames,
 * and the STUN/TURN settings read from the environment.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Playout } from '../../src/webrtc/playout.js';
import { webRtcSettings } from '../../src/config/webrtc.js';

describe('playout', () => {
  it('sends 10 ms frames of 480 samples, the queued sound in order then silence, and resolves played', async () => {
    const frames: Int16Array[] = [];
    const playout = new Playout((f) => frames.push(f));
    const sound = Int16Array.from({ length: 1000 }, (_, i) => i + 1);
    assert.equal(await playout.play(sound), 'played');
    playout.close();
    assert.ok(frames.every((f) => f.length === 480));
    const sent = new Int16Array(frames.length * 480);
    frames.forEach((f, i) => sent.set(f, i * 480));
    const start = sent.indexOf(1);
    assert.ok(start >= 0);
    assert.deepEqual(Array.from(sent.subarray(start, start + 1000)), Array.from(sound));
    assert.ok(sent.subarray(start + 1000).every((v) => v === 0), 'silence after the sound');
  });

  it('clear() drops queued sound (cleared); close() ends what is left (ended) and refuses more', async () => {
    const playout = new Playout(() => {});
    const long = playout.play(new Int16Array(48_000 * 10));
    const next = playout.play(new Int16Array(480));
    playout.clear();
    assert.deepEqual(await Promise.all([long, next]), ['cleared', 'cleared']);
    const pending = playout.play(new Int16Array(48_000 * 10));
    playout.close();
    assert.equal(await pending, 'ended');
    assert.equal(await playout.play(new Int16Array(480)), 'ended');
  });
});

describe('WebRTC settings', () => {
  it('reads STUN and TURN servers and refuses malformed ones', () => {
    assert.deepEqual(webRtcSettings({}).iceServers, []);
    const s = webRtcSettings({
      WEBRTC_STUN_URLS: 'stun:stun.example.com:3478, stun:stun2.example.com',
      WEBRTC_TURN_URLS: 'turn:turn.example.com:3478?transport=udp,turns:turn.example.com:5349',
      WEBRTC_TURN_USERNAME: 'u',
      WEBRTC_TURN_CREDENTIAL: 'p',
      WEBRTC_RECORDING_RETENTION_DAYS: '3',
    });
    assert.deepEqual(s.iceServers, [
      { urls: ['stun:stun.example.com:3478', 'stun:stun2.example.com'] },
      { urls: ['turn:turn.example.com:3478?transport=udp', 'turns:turn.example.com:5349'], username: 'u', credential: 'p' },
    ]);
    assert.equal(s.recordingRetentionSeconds, 3 * 86_400);
    assert.throws(() => webRtcSettings({ WEBRTC_STUN_URLS: 'http://x' }), /stun: or stuns:/);
    assert.throws(() => webRtcSettings({ WEBRTC_TURN_URLS: 'turn:x' }), /WEBRTC_TURN_USERNAME/);
    assert.throws(() => webRtcSettings({ WEBRTC_CONNECT_TIMEOUT_SECONDS: '0' }), /positive/);
  });
});
