/**
 * The caller's audio on its way to a realtime model, sent in pieces of `appendMs` rather than one
 * message per 20 ms frame: each append is a JSON message with base64 audio on a WebSocket (a
 * system call, framing and the model's parsing of it), so 60 ms pieces cost a third of the
 * messages. The model's voice activity detection hears the caller at most `appendMs` - 20 ms later.
 */
export class AppendBatcher {
  private pieces: Buffer[] = [];
  private bytes = 0;

  /** `batchBytes`: the bytes of `appendMs` of audio in the wire's encoding; `send` takes each batch. */
  constructor(
    private readonly batchBytes: number,
    private readonly send: (audio: Buffer) => void,
  ) {}

  push(audio: Buffer): void {
    if (audio.length === 0) return;
    this.pieces.push(audio);
    this.bytes += audio.length;
    if (this.bytes >= this.batchBytes) this.flush();
  }

  /** Sends what is held now (before the session closes or its input is committed). */
  flush(): void {
    if (this.bytes === 0) return;
    const audio = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.bytes);
    this.pieces = [];
    this.bytes = 0;
    this.send(audio);
  }
}

/** The bytes of `ms` of 16-bit PCM (2 bytes a sample) or G.711 (1) at `hz`. */
export function batchBytes(ms: number, hz: number, bytesPerSample: 1 | 2): number {
  return Math.max(1, Math.round((ms * hz) / 1000)) * bytesPerSample;
}
