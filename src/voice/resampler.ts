/** Streaming resampling for 20 ms frames (the polyphase windowed-sinc filter of lib/audio, state kept across chunks). */
export { Resampler } from '../lib/audio.js';
