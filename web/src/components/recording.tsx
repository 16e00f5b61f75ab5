/**
 * A recording with its waveform: the browser's own <audio> element plays it from a short-lived
 * signed link (so it seeks with Range requests, reading only what it plays), and wavesurfer.js
 * draws the waveform from peaks the API computed (nothing decoded in the page). Clicking the
 * waveform seeks.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { leads } from '../api/endpoints.js';
import { ErrorNote } from './ui.js';

const nonce = document.querySelector<HTMLMetaElement>('meta[name="dialer-csp-nonce"]')?.content;

/** Plays the recording on this page from `ms` (a transcript line's time); the waveform follows its element. */
export function playRecordingFrom(ms: number): void {
  const audio = document.getElementById('recording-audio') as HTMLAudioElement | null;
  if (!audio) return;
  audio.currentTime = ms / 1000;
  audio.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  // A browser may refuse to play before the page was interacted with: the position is set either way.
  void audio.play().catch(() => undefined);
}

export function RecordingPlayer({ callId }: { callId: string }) {
  const audio = useRef<HTMLAudioElement>(null);
  const wave = useRef<HTMLDivElement>(null);
  const [src, setSrc] = useState<string>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    let destroyed = false;
    let surfer: { destroy(): void } | undefined;
    (async () => {
      const [link, peaks, { default: WaveSurfer }] = await Promise.all([leads.recordingLink(callId), leads.recordingPeaks(callId, 1000), import('wavesurfer.js')]);
      if (destroyed || !audio.current || !wave.current) return;
      setSrc(link.path);
      audio.current.src = link.path;
      surfer = WaveSurfer.create({
        container: wave.current,
        media: audio.current,
        peaks: [peaks.peaks],
        duration: peaks.duration_seconds,
        height: 72,
        waveColor: '#9db4e8',
        progressColor: '#2457c5',
        cursorColor: '#131c2e',
        barWidth: 2,
        barGap: 1,
        barRadius: 2,
        normalize: true,
        ...(nonce ? { cspNonce: nonce } : {}),
      });
    })().catch((err: Error) => !destroyed && setError(err));
    return () => {
      destroyed = true;
      surfer?.destroy();
    };
  }, [callId]);
  return (
    <div class="recording">
      <div ref={wave} class="waveform" aria-hidden="true" />
      <audio ref={audio} id="recording-audio" controls preload="metadata" aria-label="Call recording" />
      <ErrorNote error={error} />
      {src && (
        <p class="hint">
          Both sides of the call, as Dialer heard and said them. <a href={src} download={`${callId}.wav`}>Download WAV</a>
        </p>
      )}
    </div>
  );
}
