/** What the bench's two processes (bench/turns.ts and its far side, bench/turns/far.ts) agree on. */

/** Every new connection to a local AI server pays this, as TCP and TLS to a distant service do. */
export const HANDSHAKE_MS = 100;
export const DEEPGRAM_KEY = 'bench-turns-deepgram-key';
/** The services' fixed latencies. */
export const SERVICE = { sttResultMs: 150, firstTokenMs: 350, wordIntervalMs: 30, speechFirstAudioMs: 120 };
/** The local realtime model's: its voice activity detection ends a turn after this much quiet, and its first audio comes this long after. */
export const REALTIME = { silenceMs: 500, firstAudioMs: 300 };
