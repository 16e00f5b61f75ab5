/**
 * One WebRTC peer connection terminated in Dialer: SDP offer in, answer out (ICE candidates
 * gathered into the answer, no trickle), the caller's audio out of the Opus decoder as PCM, the
 * agent's audio into the encoder, and one data channel for events and commands. The client makes
 * the offer, so it owns the data channel (Dialer answers whatever channel it opens).
 */
import { Resampler } from '../lib/audio.js';
import { Playout, WEBRTC_RATE_HZ } from './playout.js';
import { wrtc, type AudioData, type AudioSink, type ConnectionState, type DataChannel, type IceServer, type PeerConnection } from './wrtc.js';

export interface PeerEvents {
  /** Caller audio, mono, at `sampleRateHz` (resampled from what the decoder gives). */
  audio(pcm: Int16Array): void;
  state(state: ConnectionState): void;
  /** A JSON message from the client on the data channel. */
  message(message: unknown): void;
  /** The client closed its data channel (it hung up or went away). */
  channelClosed(): void;
}

const GATHER_LIMIT_MS = 3000;

export class InvalidOfferError extends Error {
  override name = 'InvalidOfferError';
}

export class WebRtcPeer {
  private readonly pc: PeerConnection;
  private readonly playout: Playout;
  private sink: AudioSink | undefined;
  private channel: DataChannel | undefined;
  private readonly outbox: string[] = [];
  private readonly inbound = new Map<number, Resampler>();
  private readonly outbound: Resampler;
  private closed = false;

  constructor(
    iceServers: IceServer[],
    readonly sampleRateHz: number,
    private readonly events: PeerEvents,
  ) {
    const { RTCPeerConnection, nonstandard } = wrtc();
    this.pc = new RTCPeerConnection({ iceServers });
    const source = new nonstandard.RTCAudioSource();
    this.pc.addTrack(source.createTrack());
    this.playout = new Playout((samples) => source.onData({ samples, sampleRate: WEBRTC_RATE_HZ, bitsPerSample: 16, channelCount: 1, numberOfFrames: samples.length }));
    this.outbound = new Resampler(sampleRateHz, WEBRTC_RATE_HZ);
    this.pc.ontrack = ({ track }) => {
      if (track.kind !== 'audio' || this.sink) return;
      this.sink = new nonstandard.RTCAudioSink(track);
      this.sink.ondata = (data) => this.heard(data);
    };
    this.pc.ondatachannel = ({ channel }) => this.adopt(channel);
    this.pc.onconnectionstatechange = () => this.events.state(this.pc.connectionState);
  }

  get connectionState(): ConnectionState {
    return this.pc.connectionState;
  }

  /** Answers the client's offer (also an ICE-restart offer); resolves with the answer SDP. */
  async answer(offerSdp: string): Promise<string> {
    if (!/^m=audio /m.test(offerSdp)) throw new InvalidOfferError('the offer has no audio section (m=audio)');
    try {
      await this.pc.setRemoteDescription({ type: 'offer', sdp: offerSdp });
    } catch (err) {
      throw new InvalidOfferError(`the offer was refused: ${(err as Error).message}`);
    }
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    await this.gathered();
    return this.pc.localDescription!.sdp;
  }

  private gathered(): Promise<void> {
    return new Promise((resolve) => {
      if (this.pc.iceGatheringState === 'complete') return resolve();
      const timer = setTimeout(resolve, GATHER_LIMIT_MS);
      this.pc.onicegatheringstatechange = () => {
        if (this.pc.iceGatheringState !== 'complete') return;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Plays agent audio (at `sampleRateHz`). */
  play(pcm: Int16Array) {
    return this.playout.play(this.outbound.process(pcm));
  }

  clear(): void {
    this.playout.clear();
  }

  send(message: unknown): void {
    const text = JSON.stringify(message);
    if (this.channel?.readyState !== 'open') {
      if (!this.closed) this.outbox.push(text);
      return;
    }
    try {
      this.channel.send(text);
    } catch {
      // The channel closed under us: the peer is gone, and the session ends on its close event.
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.playout.close();
    this.sink?.stop();
    try {
      this.channel?.close();
    } catch {
      // already closing
    }
    // The audio source's track is left running: stopping it lets the process exit while a sink
    // exists, but libwebrtc then crashes at process exit (SIGSEGV, measured with @roamhq/wrtc 0.10).
    this.pc.close();
  }

  private adopt(channel: DataChannel): void {
    if (this.channel) return;
    this.channel = channel;
    const flush = () => {
      for (const text of this.outbox.splice(0)) channel.send(text);
    };
    if (channel.readyState === 'open') flush();
    channel.onopen = flush;
    channel.onclose = () => {
      if (!this.closed) this.events.channelClosed();
    };
    channel.onmessage = ({ data }) => {
      if (typeof data !== 'string' || data.length > 64 * 1024) return;
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch {
        return;
      }
      this.events.message(message);
    };
  }

  /** One decoded 10 ms frame: mixed to mono and brought to the agent's rate. */
  private heard(data: AudioData): void {
    if (this.closed) return;
    const channels = data.channelCount ?? 1;
    let mono = data.samples;
    if (channels > 1) {
      mono = new Int16Array(Math.floor(data.samples.length / channels));
      for (let i = 0; i < mono.length; i++) {
        let sum = 0;
        for (let c = 0; c < channels; c++) sum += data.samples[i * channels + c]!;
        mono[i] = Math.round(sum / channels);
      }
    } else mono = Int16Array.from(mono);
    let resampler = this.inbound.get(data.sampleRate);
    if (!resampler) {
      resampler = new Resampler(data.sampleRate, this.sampleRateHz);
      this.inbound.set(data.sampleRate, resampler);
    }
    this.events.audio(data.sampleRate === this.sampleRateHz ? mono : resampler.process(mono));
  }
}
