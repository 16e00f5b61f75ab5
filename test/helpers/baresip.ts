/**
 * baresip (Debian's baresip-core) as the callee (or the caller) of SIP tests: a process with a
 * config dir of its own, listening for SIP on a free UDP port of 127.0.0.1, with one account whose
 * user is the dialled number and `answermode=auto`. It plays a WAV (aufile) as its voice, records
 * what it hears and what it sends (sndfile: dump-*-dec.wav, dump-*-enc.wav, a pair per call), and
 * takes commands over ctrl_tcp (netstring JSON: dial, hangup, DTMF).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeWav, encodeWav } from '../../src/lib/audio.js';
import { freePort } from './net.js';

export const BARESIP = process.env.BARESIP_PATH ?? '/usr/bin/baresip';

/** A UDP port free on 127.0.0.1 right now. */
export function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

export interface Baresip {
  /** host:port of its SIP socket (UDP, and TCP when it has a TLS identity). */
  address: string;
  /** host:port of its TLS listener, when it has a TLS identity. */
  tlsAddress?: string;
  dir: string;
  /** Everything it printed (for a failing test's message). */
  output(): string;
  /** Waits until its output (from offset `from` on) matches. */
  waitFor(pattern: RegExp, timeoutMs?: number, from?: number): Promise<void>;
  /** A ctrl_tcp command (`hangup`, `sndcode 5` …). */
  command(command: string, params?: string): Promise<void>;
  /** Calls `uri` (a `sip:` URI) from its account. */
  dial(uri: string): Promise<void>;
  /** What it heard from Dialer (the decoder's dump) and what it sent (the encoder's) on its latest call, as 8 kHz PCM. */
  recordings(): Promise<{ heard?: Int16Array; sent?: Int16Array }>;
  /** What it heard in each of its calls (one decoder's dump per call), by the dump's file name. */
  heardByCall(): Promise<Map<string, Int16Array>>;
  close(): Promise<void>;
}

/**
 * baresip listens on its SIP port for UDP and TCP, and on the port after it for TLS: a port free
 * for UDP may still be taken for those by another process on a busy machine. Such a start is
 * tried again on other ports.
 */
export interface BaresipOptions {
  user: string;
  /** More users it answers for (accounts of their own, answermode=auto), e.g. the human of a transfer. */
  others?: string[];
  /** Users whose calls ring until told (answermode=manual): `hangup` after `uafind` rejects one busy (486). */
  ringing?: string[];
  speech: Int16Array;
  /** Users (of `others`) who speak their own words rather than `speech` (the account's own aufile source). */
  voices?: Record<string, Int16Array>;
  sampleRateHz: number;
  /**
   * Also SIP over TCP (the same port) and TLS (the port after it), with this PEM (key and
   * certificate) as its TLS identity.
   */
  tlsIdentity?: string;
}

export async function startBaresip(options: BaresipOptions): Promise<Baresip> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      if (attempt >= 3 || !/Address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(options: BaresipOptions): Promise<Baresip> {
  const dir = await mkdtemp(path.join(tmpdir(), 'dialer-baresip-'));
  const sipPort = await freeUdpPort();
  const ctrlPort = await freePort();
  const wav = path.join(dir, 'callee.wav');
  await writeFile(wav, encodeWav(options.speech, options.sampleRateHz));
  const identity = path.join(dir, 'identity.pem');
  if (options.tlsIdentity) await writeFile(identity, options.tlsIdentity);
  for (const [user, pcm] of Object.entries(options.voices ?? {})) await writeFile(path.join(dir, `voice-${user}.wav`), encodeWav(pcm, options.sampleRateHz));
  const account = (user: string, answermode = 'auto') =>
    `<sip:${user}@127.0.0.1>;regint=0;answermode=${answermode};audio_codecs=PCMU,PCMA${options.voices?.[user] ? `;audio_source=aufile,${path.join(dir, `voice-${user}.wav`)}` : ''}\n`;
  await writeFile(
    path.join(dir, 'accounts'),
    [options.user, ...(options.others ?? [])].map((user) => account(user)).join('') + (options.ringing ?? []).map((user) => account(user, 'manual')).join(''),
  );
  await writeFile(
    path.join(dir, 'config'),
    [
      'poll_method epoll',
      `sip_listen 127.0.0.1:${sipPort}`,
      ...(options.tlsIdentity ? ['sip_transports udp,tcp,tls', `sip_certificate ${identity}`] : ['sip_transports udp']),
      `audio_source aufile,${wav}`,
      'audio_player aubridge,nowhere',
      'audio_alert aubridge,nowhere',
      'audio_level no',
      'ausrc_srate 8000',
      'auplay_srate 8000',
      'ausrc_channels 1',
      'auplay_channels 1',
      'rtp_ports 30000-40000',
      'module_path /usr/lib/baresip/modules',
      'module g711.so',
      'module aufile.so',
      'module aubridge.so',
      'module sndfile.so',
      'module_tmp account.so',
      'module_app menu.so',
      'module_app ctrl_tcp.so',
      `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
      `snd_path ${dir}`,
      '',
    ].join('\n'),
  );
  let output = '';
  const waiters: Array<() => void> = [];
  const child: ChildProcess = spawn(BARESIP, ['-f', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  const onData = (data: Buffer) => {
    output += data.toString();
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waitFor = async (pattern: RegExp, timeoutMs = 15_000, from = 0) => {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(output.slice(from))) {
      if (child.exitCode !== null) throw new Error(`baresip exited (${child.exitCode}) before ${pattern}:\n${output}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`baresip never printed ${pattern}:\n${output}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  const baresip: Baresip = {
    address: `127.0.0.1:${sipPort}`,
    ...(options.tlsIdentity ? { tlsAddress: `127.0.0.1:${sipPort + 1}` } : {}),
    dir,
    output: () => output,
    waitFor,
    async command(command, params) {
      const body = JSON.stringify({ command, ...(params !== undefined ? { params } : {}), token: 'dialer' });
      await new Promise<void>((resolve, reject) => {
        const socket = connect(ctrlPort, '127.0.0.1', () => socket.end(`${Buffer.byteLength(body)}:${body},`));
        socket.on('data', () => socket.destroy());
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    },
    dial(uri) {
      return baresip.command('dial', uri);
    },
    async recordings() {
      const files = await readdir(dir);
      const read = async (suffix: string) => {
        const names = files.filter((f) => f.startsWith('dump-') && f.endsWith(suffix));
        const times = await Promise.all(names.map(async (f) => (await stat(path.join(dir, f))).mtimeMs));
        const name = names[times.indexOf(Math.max(...times))];
        return name ? decodeWav(await readFile(path.join(dir, name))).pcm : undefined;
      };
      const [heard, sent] = await Promise.all([read('-dec.wav'), read('-enc.wav')]);
      return { ...(heard ? { heard } : {}), ...(sent ? { sent } : {}) };
    },
    async heardByCall() {
      const files = (await readdir(dir)).filter((f) => f.startsWith('dump-') && f.endsWith('-dec.wav'));
      return new Map(await Promise.all(files.map(async (f) => [f, decodeWav(await readFile(path.join(dir, f))).pcm] as const)));
    },
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(/ctrl_tcp|baresip is ready|Populated \d+ audio/i);
  } catch (err) {
    await baresip.close();
    throw err;
  }
  return baresip;
}
